"""The counters where the work is done, as a scrape of /metrics shows them (one process;
several gunicorn workers: test_gunicorn)."""

import socket

import pytest
from django.core.management import call_command

from receco.lib import sharedcache
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _value(scraped: dict, name: str, **labels) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_call_is_counted_by_procedure_and_status(api, stored, metrics_on, scrape):
    before = scrape()
    assert api.get("getReceipt", {"token": "STORE1"})[0] == 200
    assert api.get("getReceipt", {"token": "ZZZZZZ"})[0] == 404
    after = scrape()
    for status in ("200", "404"):
        name = "receco_requests_total"
        assert (
            _value(after, name, procedure="getReceipt", status=status)
            == _value(before, name, procedure="getReceipt", status=status) + 1
        )
    count = "receco_request_duration_seconds_count"
    assert _value(after, count, procedure="getReceipt") == _value(before, count, procedure="getReceipt") + 2


def test_names_no_procedure_has_are_counted_as_unknown(api, metrics_on, scrape):
    before = scrape()
    assert api.get("noSuchProcedure%0Aforged")[0] == 404
    assert api.get("getReceipt,getReceipt?batch=1")[0] in (200, 207, 400, 404)
    after = scrape()
    name = "receco_requests_total"
    assert (
        _value(after, name, procedure="unknown", status="404")
        == _value(before, name, procedure="unknown", status="404") + 1
    )
    assert not [key for key in after if "noSuchProcedure" in str(key)]


def test_pages_are_counted_by_their_view(client, stored, metrics_on, scrape):
    before = scrape()
    assert client.get(f"/app/receipt/{stored.token}").status_code == 200
    after = scrape()
    name, labels = "receco_requests_total", {"procedure": "receipts:receipt", "status": "200"}
    assert _value(after, name, **labels) == _value(before, name, **labels) + 1


def test_receipts_created_are_counted_by_mode(api, sale, live_key, test_key, metrics_on, scrape):
    before = scrape()
    assert api.post("createReceiptFromPOS", sale, **bearer(live_key))[0] == 200
    assert api.post("createReceiptFromPOS", sale, **bearer(live_key))[0] == 200  # the same sale: no new receipt
    assert api.post("createReceiptFromPOS", {**sale, "token": "rcpt_other_000001", "short_code": "OTHER1"},
                    **bearer(test_key))[0] == 200  # fmt: skip
    after = scrape()
    for mode in ("live", "test"):
        name = "receco_receipts_created_total"
        assert _value(after, name, mode=mode) == _value(before, name, mode=mode) + 1


def test_deliveries_are_counted_by_channel_and_outcome(
    api, sale, live_key, metrics_on, scrape, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    before = scrape()
    sale = {**sale, "customer_email": "ada@example.com"}
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("createReceiptFromPOS", sale, **bearer(live_key))[0] == 200
    after = scrape()
    for outcome in ("queued", "sent"):
        name = "receco_deliveries_total"
        assert (
            _value(after, name, channel="email", outcome=outcome)
            == _value(before, name, channel="email", outcome=outcome) + 1
        )


def test_rate_limit_refusals_are_counted_by_limit(api, stored, metrics_on, scrape, settings):
    settings.RECECO_RATELIMIT_ANONYMOUS = ["1/h"]
    before = scrape()
    assert [api.get("getReceipt", {"token": "STORE1"})[0] for _ in range(2)] == [200, 429]
    after = scrape()
    name = "receco_rate_limit_refusals_total"
    assert _value(after, name, limit="anonymous") == _value(before, name, limit="anonymous") + 1


def test_calls_the_cache_let_through_are_counted(api, stored, metrics_on, scrape, settings):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        settings.REDIS_URL = f"redis://127.0.0.1:{probe.getsockname()[1]}/0"
    before = scrape()
    assert [api.get("getReceipt", {"token": "STORE1"})[0] for _ in range(2)] == [200, 200]
    after = scrape()
    sharedcache.reset()
    name = "receco_cache_fail_open_total"
    # The first call waits for Redis and fails, the second skips it during the pause.
    assert _value(after, name, operation="rate limiting") >= _value(before, name, operation="rate limiting") + 2


def test_the_task_queue_depth_is_read_from_the_database(
    receipt_factory, metrics_on, scrape, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    assert _value(scrape(), "receco_task_queue_ready", queue="default") == 0
    with django_capture_on_commit_callbacks(execute=True):
        receipt_factory(customer_email="ada@example.com", customer_phone="+2348031234567")
    # The dispatcher at once; the second wake-up of this process queued another for a second later.
    assert _value(scrape(), "receco_task_queue_ready", queue="default") == 1


@pytest.mark.django_db(transaction=True)
def test_delivery_attempts_in_the_worker_are_counted(receipt_factory, metrics_on, scrape, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    before = scrape()
    receipt_factory(customer_email="ada@example.com")
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    after = scrape()
    name = "receco_deliveries_total"
    assert (
        _value(after, name, channel="email", outcome="sent")
        == _value(before, name, channel="email", outcome="sent") + 1
    )
    assert _value(after, "receco_task_queue_ready", queue="default") == 0


def test_webhook_attempts_are_counted_by_outcome(
    merchant, receipt_factory, metrics_on, scrape, settings, django_capture_on_commit_callbacks
):
    from tests.receivers import Receiver
    from webhooks.endpoints import create_endpoint

    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    receiver = Receiver()
    try:
        create_endpoint(merchant, receiver.url)
        with socket.socket() as probe:  # a port nothing listens on
            probe.bind(("127.0.0.1", 0))
            create_endpoint(merchant, f"http://127.0.0.1:{probe.getsockname()[1]}/hook")
        before = scrape()
        with django_capture_on_commit_callbacks(execute=True):
            receipt_factory()
        after = scrape()
    finally:
        receiver.close()
    name = "receco_webhook_attempts_total"
    for outcome in ("succeeded", "retrying"):
        assert _value(after, name, outcome=outcome) == _value(before, name, outcome=outcome) + 1
