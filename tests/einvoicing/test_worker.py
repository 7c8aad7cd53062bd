"""Issue 36's "done when", through the real task worker (``manage.py db_worker``, as
production runs it) against the double of NRS: a live sale, its refund and a void of
another sale reach NRS as the collection documents them, every call checked; a report NRS
refuses is shown as refused and told; one that meets an outage is tried again."""

import json
import os
import time
from zoneinfo import ZoneInfo

import jsonschema
import pytest
from django.db import connection

from einvoicing.models import EINVOICE, Report
from messaging.models import Delivery
from messaging.outbox import sweep
from receipts import refunds
from tests.einvoicing.nrs import INVOICE_SCHEMA, UPDATE_SCHEMA
from tests.servers import start_worker
from webhooks.endpoints import create_endpoint

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

VAT = [{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}]
FIRST, SECOND, THIRD = (f"MAMAPU202600000{n}-94ND90NR-20261122" for n in (1, 2, 3))
LAGOS = ZoneInfo("Africa/Lagos")


@pytest.fixture
def worker(settings, nrs, tmp_path):
    """A worker on the test's database (its rows committed), reporting to the double."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    running = start_worker(
        url,
        tmp_path / "worker.log",
        RECECO_EINVOICING_KEYS=os.environ["RECECO_EINVOICING_KEYS"],  # the suite's: it sealed the credentials
        RECECO_EINVOICING_URL=nrs.url,
        RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST="1",
        RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES="1",
    )
    yield running
    running.stop()


def _states() -> dict[tuple[str, str], str]:
    return {(report.irn, report.document): report.state for report in Report.objects.all()}


def _until(expected: dict, worker, retrying: str | None = None, seconds: float = 60) -> None:
    """Wait until the reports are in ``expected``'s states (and the delivery of ``retrying`` waits for its retry)."""
    deadline = time.monotonic() + seconds

    def done() -> bool:
        waits = Delivery.objects.filter(channel=EINVOICE, destination=retrying, status="retrying").exists()
        return _states() == expected and (retrying is None or waits)

    while not done():
        assert time.monotonic() < deadline, f"{_states()}\n{worker.log.read_text()[-3000:]}"
        time.sleep(0.2)


def test_a_sale_its_refund_and_a_void_reach_nrs_through_the_worker(
    reporting, nrs, taxpayer, receipt_factory, merchant, receiver, worker
):
    create_endpoint(merchant, receiver.url, event_types=["receipt.reported", "receipt.report_failed"])
    # The first is signed, but NRS's answer that confirms it is lost to an outage.
    nrs.fail(f"/api/v1/invoice/confirm/{FIRST}", 503)
    nrs.refuse(THIRD, "tin 29445920-4211 is not enabled for e-invoicing")
    first = receipt_factory(token="rcpt_worker001_aaaaa", short_code="WORKR1", tax_lines=VAT)
    second = receipt_factory(token="rcpt_worker002_aaaaa", short_code="WORKR2")
    receipt_factory(token="rcpt_worker003_aaaaa", short_code="WORKR3")
    waiting = {(FIRST, "invoice"): "waiting", (SECOND, "invoice"): "reported", (THIRD, "invoice"): "refused"}
    _until(waiting, worker, retrying=FIRST)
    retry = Delivery.objects.get(channel=EINVOICE, destination=FIRST)
    assert sweep(now=retry.next_attempt_at) == 1  # its time has come: the worker sends it again
    _until({(FIRST, "invoice"): "reported", (SECOND, "invoice"): "reported", (THIRD, "invoice"): "refused"}, worker)

    request = refunds.validate_refund({"token": first.token, "items": [{"index": 0, "quantity": 1}]})
    refund = refunds.refund(first, request, keyed=True).receipt
    refunds.void(second, "Rung up twice", keyed=True)
    note = f"MAMAPU2026000004-94ND90NR-{refund.transaction_date.astimezone(LAGOS):%Y%m%d}"
    _until(
        {
            (FIRST, "invoice"): "reported",
            (SECOND, "invoice"): "reported",
            (THIRD, "invoice"): "refused",
            (note, "credit_note"): "reported",
            (SECOND, "cancellation"): "reported",
        },
        worker,
    )

    calls = [(method, path) for method, path in nrs.paths() if "/resources/" not in path]
    assert sorted(calls) == sorted(
        [
            *_reported(FIRST),  # its confirmation lost to the outage
            ("GET", f"/api/v1/invoice/confirm/{FIRST}"),  # the retry asks first, finds it: not signed again
            *_reported(SECOND),
            ("POST", "/api/v1/invoice/validate"),  # the third's, refused
            *_reported(note),
            ("PATCH", f"/api/v1/invoice/update/{SECOND}"),
        ]
    )
    assert {path for _, path in nrs.paths() if "/resources/" in path} <= {
        "/api/v1/invoice/resources/invoice-types",
        "/api/v1/invoice/resources/payment-means",
        "/api/v1/invoice/resources/tax-categories",
    }
    for call in nrs.calls:
        if "/resources/" in call.path:
            assert "x-api-key" not in call.headers
            continue
        assert (call.headers["x-api-key"], call.headers["x-api-secret"]) == (taxpayer.api_key, taxpayer.api_secret)
        if call.method == "POST":
            jsonschema.validate(call.body, INVOICE_SCHEMA)
        elif call.method == "PATCH":
            jsonschema.validate(call.body, UPDATE_SCHEMA)
            assert call.body == {"payment_status": "CANCELED"}
    assert nrs.invoices[note].body["billing_reference"] == [{"irn": FIRST, "issue_date": "2026-11-22"}]
    assert nrs.invoices[note].body["invoice_type_code"] == "380"
    assert nrs.invoices[SECOND].payment_status == "CANCELED"
    assert THIRD not in nrs.invoices
    refused = Report.objects.get(irn=THIRD)
    assert refused.message.endswith("(tin 29445920-4211 is not enabled for e-invoicing)")

    deadline = time.monotonic() + 30
    while len(receiver.requests) < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    told = sorted((event["type"], event["data"]["report"]["irn"]) for event in receiver.events())
    assert told == sorted(
        [
            ("receipt.reported", FIRST),
            ("receipt.reported", SECOND),
            ("receipt.report_failed", THIRD),
            ("receipt.reported", note),
            ("receipt.reported", SECOND),
        ]
    )
    cancelled = next(e for e in receiver.events() if e["data"]["report"]["document"] == "cancellation")
    assert cancelled["data"]["object"]["status"] == "voided"
    assert json.dumps(receiver.events()).count(taxpayer.api_secret) == 0


def _reported(irn: str) -> list[tuple[str, str]]:
    return [
        ("POST", "/api/v1/invoice/validate"),
        ("POST", "/api/v1/invoice/sign"),
        ("GET", f"/api/v1/invoice/confirm/{irn}"),
    ]
