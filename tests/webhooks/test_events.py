"""Events: one per change to a merchant's receipt, to each endpoint that wants it, with the
receipt as getReceipt gives it to its merchant."""

import json
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django_tasks_db.models import DBTaskResult

from messaging.outbox import dispatch
from receco.errors import Conflict
from receipts.creation import create_receipt
from receipts.refunds import refund, validate_refund, void
from receipts.rendering.representation import receipt_data
from receipts.validation import validate_sale
from receipts.writer import update_contact as attach_contact
from webhooks.endpoints import create_endpoint
from webhooks.models import Delivery, Event
from webhooks.signing import signature

pytestmark = pytest.mark.django_db


def _sell(merchant, sale, **overrides):
    return create_receipt(merchant, validate_sale({**sale, **overrides}), keyed=True).receipt


def test_a_new_receipt_is_posted_signed_with_its_whole_data(sent, endpoint, receiver, merchant, sale):
    receipt = sent(_sell, merchant, sale, customer_email="ada@example.com")
    (request,) = receiver.requests
    event = json.loads(request["body"])
    assert event["type"] == "receipt.created"
    assert event["id"].startswith("evt_")
    assert request["headers"]["Receco-Event-Id"] == event["id"]
    assert event["livemode"] is True
    assert event["created"].endswith("Z")
    receipt.refresh_from_db()
    assert event["data"] == {"object": receipt_data(receipt, reveal_contact=True)}
    assert event["data"]["object"]["customer_email"] == "ada@example.com"  # its merchant sees it unmasked
    timestamp, v1 = request["headers"]["Receco-Signature"].split(",")
    t = int(timestamp.removeprefix("t="))
    assert v1 == "v1=" + signature(endpoint.secret, t, request["body"])
    assert request["headers"]["Content-Type"] == "application/json"
    assert "Cookie" not in request["headers"]
    assert "Authorization" not in request["headers"]


def test_every_change_makes_one_event_of_its_type(sent, endpoint, receiver, merchant, sale):
    receipt = sent(_sell, merchant, sale)
    sent(attach_contact, receipt, "ada@example.com", None, keyed=True)
    sent(refund, receipt, validate_refund({"token": receipt.token, "amount": 1000}), keyed=True)
    other = sent(_sell, merchant, sale, token="rcpt_second_sale_01", short_code="SECND2")
    sent(void, other, None, keyed=True)
    assert receiver.types() == [
        "receipt.created",
        "receipt.contact_updated",
        "receipt.refunded",
        "receipt.created",
        "receipt.voided",
    ]
    for request in receiver.requests:  # each signed with the endpoint's secret
        t, v1 = (part.split("=", 1)[1] for part in request["headers"]["Receco-Signature"].split(","))
        assert v1 == signature(endpoint.secret, int(t), request["body"])
    assert len({event["id"] for event in receiver.events()}) == 5
    refunded = receiver.events()[2]["data"]["object"]
    assert refunded["status"] == "partially_refunded"
    assert refunded["refunds"][0]["amount"] == 1000


def test_an_idempotent_replay_makes_no_event(sent, endpoint, receiver, merchant, sale):
    sent(_sell, merchant, sale)
    sent(_sell, merchant, sale)
    assert receiver.types() == ["receipt.created"]


def test_a_failed_customer_delivery_is_an_event(sent, endpoint, receiver, merchant, sale, settings):
    settings.RECECO_SMS_BACKEND = "messaging.sms.WebhookBackend"
    settings.RECECO_SMS_WEBHOOK_URL = "http://127.0.0.1:9/unreachable"
    settings.RECECO_DELIVERY_MAX_ATTEMPTS = 1
    sent(_sell, merchant, sale, customer_phone="+2348031234589")
    assert receiver.types() == ["receipt.created", "delivery.failed"]


def test_test_receipts_make_test_events(sent, endpoint, receiver, merchant, sale):
    sent(lambda: create_receipt(merchant, validate_sale(sale), livemode=False))
    assert receiver.events()[0]["livemode"] is False


def test_an_endpoint_gets_only_the_types_it_chose(sent, merchant, receiver, sale):
    create_endpoint(merchant, receiver.url, ["receipt.voided"])
    receipt = sent(_sell, merchant, sale)
    assert receiver.requests == []
    sent(void, receipt, "wrong till", keyed=True)
    assert receiver.types() == ["receipt.voided"]


def test_a_disabled_endpoint_gets_nothing(sent, endpoint, receiver, merchant, sale):
    endpoint.enabled = False
    endpoint.save()
    sent(_sell, merchant, sale)
    assert receiver.requests == []
    assert not Event.objects.exists()


def test_a_merchant_without_endpoints_pays_one_query_per_merchant_object(merchant, sale):
    with CaptureQueriesContext(connection) as first:
        _sell(merchant, sale)
    with CaptureQueriesContext(connection) as second:
        _sell(merchant, sale, token="rcpt_second_sale_01", short_code="SECND2")
    assert sum("webhooks_endpoint" in query["sql"] for query in first.captured_queries) == 1
    # Asked once per Merchant object: its endpoints, and whether it reports to NRS (einvoicing.hooks).
    assert len(first) == len(second) + 2
    assert not any("webhooks" in query["sql"] for query in second.captured_queries)
    assert not Event.objects.exists()


def test_the_first_sale_after_an_endpoint_is_added_makes_an_event(api, sent, merchant, live_key, sale, receiver):
    auth = {"Authorization": f"Bearer {live_key.key}"}
    sent(api.post, "createReceiptFromPOS", sale, **auth)  # the key and its merchant are remembered now
    create_endpoint(merchant, receiver.url)
    status, _ = sent(api.post, "createReceiptFromPOS", {**sale, "token": "rcpt_second_sale_01"}, **auth)
    assert status == 200
    assert receiver.types() == ["receipt.created"]


def test_each_endpoint_gets_its_own_delivery(sent, endpoint, merchant, sale, receiver):
    create_endpoint(merchant, receiver.url + "/second")
    sent(_sell, merchant, sale)
    assert Delivery.objects.filter(status="sent").count() == 2
    assert sorted(request["path"] for request in receiver.requests) == ["/hooks", "/hooks/second"]


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def test_with_the_database_queue_sales_wake_one_dispatcher_a_second(
    database_tasks, endpoint, merchant, sale, receiver, django_capture_on_commit_callbacks
):
    for n in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            _sell(merchant, sale, token=f"rcpt_woken_{n:08d}", short_code="")
    assert set(Delivery.objects.values_list("status", flat=True)) == {"pending"}
    dispatchers = DBTaskResult.objects.filter(task_path="messaging.outbox.dispatch_deliveries")  # not the log's
    first, second = dispatchers.order_by("enqueued_at")  # the third sale needed none
    assert first.task_path == second.task_path == "messaging.outbox.dispatch_deliveries"
    assert first.task.run_after is None  # at once
    assert timedelta(seconds=0.5) < second.task.run_after - first.enqueued_at <= timedelta(seconds=1.1)
    assert dispatch(threads=False) == (3, False)  # the dispatcher sends every pending delivery
    assert receiver.types() == ["receipt.created"] * 3
    assert set(Delivery.objects.values_list("status", flat=True)) == {"sent"}
    assert dispatch(threads=False) == (0, False)


def test_a_change_that_rolls_back_leaves_no_event_and_no_task(database_tasks, endpoint, merchant, sale):
    def sell_then_fail():
        with transaction.atomic():
            _sell(merchant, sale)
            raise RuntimeError("the till's request failed after the insert")

    with pytest.raises(RuntimeError):
        sell_then_fail()
    assert not Event.objects.exists()
    assert not DBTaskResult.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_sale_with_an_endpoint_writes_its_event_in_its_transaction(
    database_tasks, endpoint, merchant, sale, receiver
):
    _sell(merchant, sale, token="rcpt_warm_up_000001", short_code="")  # the merchant knows its endpoints now
    with CaptureQueriesContext(connection) as queries:
        receipt = _sell(merchant, sale, customer_email=None)
    statements = [query["sql"] for query in queries.captured_queries if "django_tasks" not in query["sql"]]
    # The receipt's INSERT (its number's upsert before it), then the event and its delivery.
    tables = [sql.rsplit("INSERT INTO ", 1)[1].split(" ")[0] for sql in statements if "INSERT INTO" in sql]
    assert tables == ['"receipts_receipt"', '"webhooks_event"', '"messaging_delivery"']
    event = Event.objects.get(receipt=receipt)
    receipt.refresh_from_db()
    body = json.loads(event.body)
    assert body["data"] == {"object": receipt_data(receipt, reveal_contact=True)}
    # Its id and number, drawn as it was stored.
    assert body["data"]["object"]["receipt_number"] == receipt.receipt_number
    assert receipt.receipt_number.endswith("-000002")
    assert (body["id"], body["type"], body["livemode"]) == (event.public_id, "receipt.created", True)
    assert Delivery.objects.of_event(event).get().status == "pending"
    dispatch(threads=False)
    assert [e["id"] for e in receiver.events()][-1] == event.public_id
    assert receiver.requests[-1]["body"] == event.body.encode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_sale_whose_token_is_taken_writes_nothing(database_tasks, endpoint, merchant, sale):
    _sell(merchant, sale)
    with pytest.raises(Conflict):
        _sell(merchant, sale, location="Another till")
    assert Event.objects.count() == Delivery.objects.count() == 1
