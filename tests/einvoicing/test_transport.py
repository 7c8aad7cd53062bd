"""Reporting through the outbox, against the double of NRS: a sale validated, signed and
confirmed; a refund's credit note after its sale; a void's cancellation; what NRS refuses
shown as refused and told; an outage tried again, never signing twice; nothing sent that
the shop has not completed, and the credentials never written anywhere."""

import base64
import json
import logging
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric import padding

from einvoicing.models import EINVOICE, Report
from messaging.models import Delivery
from messaging.outbox import sweep
from receipts import refunds
from tests.einvoicing.conftest import CERTIFICATE
from webhooks.endpoints import create_endpoint
from webhooks.models import Event

VAT = [{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}]
INVOICE_CALLS = ["POST /api/v1/invoice/validate", "POST /api/v1/invoice/sign", "GET /api/v1/invoice/confirm/{}"]


@pytest.fixture
def report(reporting, nrs, django_capture_on_commit_callbacks):
    """Run ``change`` and send what it queued, as the worker would once it commits."""

    def run(change):
        with django_capture_on_commit_callbacks(execute=True):
            return change()

    return run


def _calls(nrs, start=0) -> list[str]:
    return [f"{method} {path}" for method, path in nrs.paths()[start:] if "/resources/" not in path]


def _delivery(report: Report) -> Delivery:
    return Delivery.objects.filter(channel=EINVOICE, payload_id=report.pk).latest("pk")


def test_a_sale_is_validated_signed_and_confirmed_and_its_qr_code_made(
    report, receipt_factory, nrs, nrs_private_key, taxpayer
):
    sale = report(lambda: receipt_factory(tax_lines=VAT))
    invoice = Report.objects.get()
    irn = "MAMAPU2026000001-94ND90NR-20261122"
    assert (invoice.state, invoice.irn, invoice.message) == ("reported", irn, "")
    assert _calls(nrs) == [call.format(irn) for call in INVOICE_CALLS]
    assert nrs.paths()[:3] == [
        ("GET", "/api/v1/invoice/resources/invoice-types"),
        ("GET", "/api/v1/invoice/resources/payment-means"),
        ("GET", "/api/v1/invoice/resources/tax-categories"),
    ]
    signed = nrs.invoices[irn]
    assert invoice.stamp == signed.stamp  # what NRS answered its signing with
    assert (signed.body["invoice_type_code"], signed.body["payment_status"]) == ("381", "PAID")
    assert signed.body["tax_total"][0]["tax_subtotal"][0]["tax_category"] == {"id": "STANDARD_VAT", "percent": 7.5}
    message = json.loads(nrs_private_key.decrypt(base64.b64decode(invoice.qr_payload), padding.PKCS1v15()))
    assert message["certificate"] == CERTIFICATE
    assert message["irn"].startswith(f"{irn}.")
    assert abs(int(message["irn"].rsplit(".", 1)[1]) - invoice.reported_at.timestamp()) < 5
    assert _delivery(invoice).status == "sent"
    assert sale.status == "completed"


def test_a_refund_is_a_credit_note_referring_to_its_sales_invoice(report, receipt_factory, nrs):
    sale = report(lambda: receipt_factory(tax_lines=VAT))
    request = refunds.validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}]})
    refund = report(lambda: refunds.refund(sale, request, keyed=True).receipt)
    note = Report.objects.get(receipt=refund)
    assert (note.document, note.state) == ("credit_note", "reported")
    body = nrs.invoices[note.irn].body
    assert body["invoice_type_code"] == "380"
    assert body["billing_reference"] == [{"irn": "MAMAPU2026000001-94ND90NR-20261122", "issue_date": "2026-11-22"}]
    assert body["invoice_line"] == [
        {
            "invoiced_quantity": 1,
            "line_extension_amount": 300.0,
            "item": {"name": "Chapman", "description": "Chapman"},
            "price": {"price_amount": 300.0, "base_quantity": 1, "price_unit": "NGN per 1"},
        }
    ]
    # The refund's share of the sale's VAT, as its receipt states it (receipts.rendering.documents).
    assert body["tax_total"][0]["tax_amount"] == 20.93
    assert body["legal_monetary_total"]["payable_amount"] == 300.0


def test_a_void_cancels_its_sales_invoice(report, receipt_factory, nrs):
    sale = report(lambda: receipt_factory())
    start = len(nrs.calls)
    report(lambda: refunds.void(sale, "Rung up twice", keyed=True))
    cancellation = Report.objects.get(document="cancellation")
    assert cancellation.state == "reported"
    assert _calls(nrs, start) == [f"PATCH /api/v1/invoice/update/{cancellation.irn}"]
    assert nrs.calls[-1].body == {"payment_status": "CANCELED"}  # the void's reason is the shop's: not sent
    assert nrs.invoices[cancellation.irn].payment_status == "CANCELED"


def test_what_nrs_refuses_is_refused_with_its_message_and_told(report, receipt_factory, nrs, merchant, receiver):
    create_endpoint(merchant, receiver.url)
    nrs.refuse("MAMAPU2026000001-94ND90NR-20261122", "tin TIN-0099 is not registered")
    sale = report(lambda: receipt_factory())
    refused = Report.objects.get()
    assert refused.state == "refused"
    assert refused.message == (
        "NRS answered HTTP 400: validation failed: we are unable to process your request. also confirm this is "
        "not a duplicate request (tin TIN-0099 is not registered)"
    )
    delivery = _delivery(refused)
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 1, None)  # not tried again
    assert _calls(nrs) == ["POST /api/v1/invoice/validate"]  # nothing signed
    event = Event.objects.get(type="receipt.report_failed")
    body = json.loads(event.body)
    assert body["data"]["object"]["token"] == sale.token
    assert body["data"]["report"] == {
        "irn": refused.irn,
        "document": "invoice",
        "state": "refused",
        "message": refused.message,
        "reported_at": None,
    }


def test_a_report_accepted_is_told_to_the_shops_systems(report, receipt_factory, merchant, receiver):
    create_endpoint(merchant, receiver.url, event_types=["receipt.reported"])
    report(lambda: receipt_factory())
    (event,) = Event.objects.filter(type="receipt.reported")
    assert json.loads(event.body)["data"]["report"]["state"] == "reported"
    assert "receipt.reported" in receiver.types()


def test_an_outage_is_tried_again_later_and_nothing_is_signed_twice(report, receipt_factory, nrs):
    irn = "MAMAPU2026000001-94ND90NR-20261122"
    nrs.fail(f"/api/v1/invoice/confirm/{irn}", 503)  # signed, but the answer that says so is lost
    report(lambda: receipt_factory())
    waiting = Report.objects.get()
    assert (waiting.state, waiting.message) == ("waiting", "NRS answered HTTP 503: service unavailable")
    delivery = _delivery(waiting)
    assert delivery.status == "retrying"
    assert timedelta(minutes=1) <= delivery.next_attempt_at - delivery.updated_at <= timedelta(minutes=1.25)
    start = len(nrs.calls)
    assert sweep(now=delivery.next_attempt_at) == 1  # its time has come: the worker's dispatcher sends it
    waiting.refresh_from_db()
    assert waiting.state == "reported"
    assert _calls(nrs, start) == [f"GET /api/v1/invoice/confirm/{irn}"]  # asked, found: not signed again
    assert [path for _, path in nrs.paths()].count("/api/v1/invoice/sign") == 1
    assert waiting.qr_payload


def test_a_report_not_accepted_within_20_hours_is_refused_and_told(report, receipt_factory, nrs, merchant, receiver):
    create_endpoint(merchant, receiver.url, event_types=["receipt.report_failed"])
    nrs.fail("/api/v1/invoice/validate", 502, times=100)
    report(lambda: receipt_factory())
    delivery = _delivery(Report.objects.get())
    Delivery.objects.filter(pk=delivery.pk).update(created_at=delivery.created_at - timedelta(hours=20))
    sweep(now=delivery.next_attempt_at)
    refused = Report.objects.get()
    assert (refused.state, refused.message) == ("refused", "NRS answered HTTP 502: service unavailable")
    assert Event.objects.filter(type="receipt.report_failed").count() == 1


def test_a_credit_note_waits_for_its_sales_invoice(report, receipt_factory, nrs):
    nrs.fail("/api/v1/invoice/validate", 503)
    sale = report(lambda: receipt_factory())
    refund = report(lambda: refunds.refund(sale, refunds.validate_refund({"token": sale.token}), keyed=True).receipt)
    note = Report.objects.get(receipt=refund)
    assert (note.state, note.message) == (
        "waiting",
        "Waiting for its sale's invoice MAMAPU2026000001-94ND90NR-20261122 to be reported",
    )
    sweep(now=_delivery(note).next_attempt_at + timedelta(minutes=5))  # both due: the sale first
    assert set(Report.objects.values_list("state", flat=True)) == {"reported"}


def test_a_shop_without_its_legal_identity_sends_nothing_and_is_told_what_to_fill_in(
    report, receipt_factory, nrs, identified
):
    identified.tax_id = ""
    identified.support_email = ""
    identified.save()
    report(lambda: receipt_factory())
    refused = Report.objects.get()
    assert (refused.state, refused.message) == (
        "refused",
        "Shop details lack its tax identifier (TIN), its support email: fill them in, then report the day again",
    )
    assert nrs.calls == []


def test_wrong_credentials_are_refused_as_nrs_refuses_them(report, receipt_factory, reporting, nrs):
    reporting.set_credentials(api_secret="not-the-secret")
    reporting.save()
    report(lambda: receipt_factory())
    assert Report.objects.get().message == "NRS answered HTTP 400: unable to validate api key"


def test_without_the_operators_url_reports_wait(report, receipt_factory, settings, nrs):
    settings.RECECO_EINVOICING_URL = ""
    report(lambda: receipt_factory())
    waiting = Report.objects.get()
    assert (waiting.state, waiting.message) == ("waiting", "RECECO_EINVOICING_URL is not set: the operator must set it")


def test_the_credentials_are_never_written_to_a_log_or_a_record(report, receipt_factory, nrs, taxpayer, caplog):
    caplog.set_level(logging.DEBUG)
    nrs.fail("/api/v1/invoice/validate", 503)
    report(lambda: receipt_factory())
    sweep(now=_delivery(Report.objects.get()).next_attempt_at)
    nrs.refuse("MAMAPU2026000002-94ND90NR-20261122", "no")
    report(lambda: receipt_factory(token="rcpt_second000_aaaaa", short_code="SECND1"))
    written = caplog.text + "".join(Report.objects.values_list("message", flat=True))
    written += "".join(Delivery.objects.values_list("last_error", flat=True))
    assert "NRS answered HTTP" in written  # what was written is there
    for secret in (taxpayer.api_key, taxpayer.api_secret):
        assert secret not in written
