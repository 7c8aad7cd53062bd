"""Every live receipt of a merchant that reports is recorded for NRS with it, in its own
transaction; a merchant that does not report pays its sales no query."""

from zoneinfo import ZoneInfo

from django.db import connection
from django.test.utils import CaptureQueriesContext

from einvoicing.models import EINVOICE, EInvoicing, Report
from messaging.models import Delivery
from receipts import refunds
from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.validation import validate_sale

LAGOS = ZoneInfo("Africa/Lagos")


def _einvoicing_queries(queries) -> list[str]:
    return [query["sql"] for query in queries if "einvoicing" in query["sql"]]


def test_a_merchant_that_does_not_report_pays_a_sale_no_query(merchant, sale):
    data = validate_sale(sale)
    with CaptureQueriesContext(connection) as first:
        create_receipt(merchant, {**data, "token": "rcpt_first0000_aaaaaa", "short_code": "FIRST1"})
    with CaptureQueriesContext(connection) as second:
        create_receipt(merchant, {**data, "token": "rcpt_second000_aaaaa", "short_code": "SECND1"})
    assert len(_einvoicing_queries(first.captured_queries)) == 1  # asked once per Merchant object
    assert _einvoicing_queries(second.captured_queries) == []
    assert not Report.objects.exists()


def test_a_sale_is_recorded_with_its_delivery_in_the_outbox(reporting, receipt_factory):
    receipt = receipt_factory()
    report = Report.objects.get()
    assert (report.receipt, report.document, report.state) == (receipt, "invoice", "waiting")
    assert report.irn == "MAMAPU2026000001-94ND90NR-20261122"
    delivery = Delivery.objects.get(channel=EINVOICE)
    assert (delivery.destination, delivery.payload_id, delivery.merchant_id) == (
        report.irn,
        report.pk,
        receipt.merchant_id,
    )
    assert delivery.receipt is None  # nothing of it is a customer's


def test_test_receipts_and_a_merchant_whose_reporting_is_off_are_not_reported(reporting, receipt_factory, test_receipt):
    assert not Report.objects.filter(receipt=test_receipt).exists()
    reporting.enabled = False
    reporting.save()  # the merchant's own object forgets it reported
    receipt_factory()
    assert not Report.objects.exists()


def test_switching_reporting_on_takes_effect_at_the_next_sale(identified, receipt_factory, taxpayer, crypto_keys):
    receipt_factory(token="rcpt_before000_aaaaa", short_code="BEFOR1")
    setup = EInvoicing(merchant=identified, enabled=True, business_id="b-1", service_id="94ND90NR", city="Lagos")
    setup.set_credentials(api_key="k", api_secret="s", crypto_keys=crypto_keys)
    setup.save()
    after = receipt_factory(token="rcpt_after0000_aaaaa", short_code="AFTER1")
    assert list(Report.objects.values_list("receipt", flat=True)) == [after.pk]


def test_a_refund_is_a_credit_note_and_reports_its_sale_first_if_it_never_was(identified, receipt_factory, crypto_keys):
    sale = receipt_factory()  # before e-invoicing was switched on
    setup = EInvoicing(merchant=identified, enabled=True, business_id="b-1", service_id="94ND90NR", city="Lagos")
    setup.set_credentials(api_key="k", api_secret="s", crypto_keys=crypto_keys)
    setup.save()
    refund = refunds.refund(sale, refunds.validate_refund({"token": sale.token, "amount": 20000}), keyed=True).receipt
    reports = {(report.receipt_id, report.document): report.irn for report in Report.objects.all()}
    assert reports == {
        (sale.pk, "invoice"): "MAMAPU2026000001-94ND90NR-20261122",
        (refund.pk, "credit_note"): f"MAMAPU2026000002-94ND90NR-{refund.transaction_date.astimezone(LAGOS):%Y%m%d}",
    }
    assert Delivery.objects.filter(channel=EINVOICE).count() == 2


def test_a_void_is_the_cancellation_of_its_sales_invoice(reporting, receipt_factory):
    sale = receipt_factory()
    refunds.void(sale, "Rung up twice", keyed=True)
    invoice, cancellation = Report.objects.order_by("pk")
    assert (cancellation.document, cancellation.irn, cancellation.receipt) == ("cancellation", invoice.irn, sale)
    assert Delivery.objects.filter(channel=EINVOICE, destination=invoice.irn).count() == 2


def test_a_refund_or_void_of_a_sale_made_before_receipts_were_numbered_is_not_reported(reporting, receipt_factory):
    sale = receipt_factory()
    Report.objects.all().delete()
    Receipt.objects.filter(pk=sale.pk).update(number=None, number_series=None)
    sale.refresh_from_db()
    refund = refunds.refund(sale, refunds.validate_refund({"token": sale.token, "amount": 100}), keyed=True).receipt
    assert refund.receipt_number is not None  # the refund itself is numbered, its sale has no IRN to refer to
    other = receipt_factory(token="rcpt_unnumbered_aaaa", short_code="UNNUM1")
    Report.objects.all().delete()
    Receipt.objects.filter(pk=other.pk).update(number=None, number_series=None)
    other.refresh_from_db()
    refunds.void(other, "", keyed=True)
    assert not Report.objects.exists()
