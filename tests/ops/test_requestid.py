"""The request id: X-Request-ID when sane, else made; returned; on the log lines of the
request and of the tasks it queued."""

import logging
import re

import pytest
from django.core.management import call_command

from messaging.models import Delivery
from receco.ops import requestid
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

MADE = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize("given", ["3f2a9c1e-77b4-4c1d-9d0e-2f6b1a8c5e44", "lb.1700000000.42", "a" * 128])
def test_a_sane_request_id_is_kept(client, given):
    response = client.get("/app/scan", headers={"X-Request-ID": given})
    assert response["X-Request-ID"] == given


@pytest.mark.parametrize(
    "given",
    [
        "a" * 129,  # too long
        "ada@example.com",  # not an id: an address
        "id with spaces",
        "id\u00e9",
        "forged\nline",
        "",
    ],
)
def test_anything_else_is_replaced_by_a_new_one(client, given):
    response = client.get("/app/scan", headers={"X-Request-ID": given})
    assert MADE.fullmatch(response["X-Request-ID"])


def test_every_request_gets_its_own(client):
    first, second = client.get("/app/scan")["X-Request-ID"], client.get("/app/scan")["X-Request-ID"]
    assert MADE.fullmatch(first)
    assert MADE.fullmatch(second)
    assert first != second


def test_api_calls_return_it_too(api):
    response = api.request("GET", "getReceipt", headers={"X-Request-ID": "till-7-sale-42"})
    assert response.status_code == 400
    assert response["X-Request-ID"] == "till-7-sale-42"


def test_the_request_lines_carry_it(api, sale, caplog):
    caplog.set_level(logging.INFO)
    sale = {**sale, "customer_email": "ada@example.com"}
    api.post("createReceiptFromPOS", sale, **{"X-Request-ID": "till-7-sale-42"})
    queued = [record for record in caplog.records if record.name == "messaging.customers"]
    assert [record.request_id for record in queued] == ["till-7-sale-42"]


@pytest.mark.django_db(transaction=True)  # committed, so the delivery is queued; the worker reads it
def test_the_worker_logs_under_the_id_of_the_request_that_queued(api, sale, live_key, settings, caplog):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    sale = {**sale, "customer_email": "ada@example.com"}
    status, _ = api.post("createReceiptFromPOS", sale, **bearer(live_key), **{"X-Request-ID": "till-7-sale-42"})
    assert status == 200
    assert Delivery.objects.get().request_id == "till-7-sale-42"  # kept with the delivery, not the task
    caplog.clear()
    caplog.set_level(logging.INFO)
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    sent = [record for record in caplog.records if record.name == "messaging.outbox"]
    delivery = Delivery.objects.get()
    assert [(record.getMessage(), record.request_id) for record in sent] == [
        (f"delivery {delivery.pk} (a*******@example.com) sent", "till-7-sale-42")
    ]


def test_a_task_queued_outside_a_request_gets_an_id_of_its_own():
    with requestid.restored(None) as made:
        assert MADE.fullmatch(made)
        assert requestid.current() == made
    assert requestid.current() == ""
