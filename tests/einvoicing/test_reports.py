"""IRNs as NRS prescribes them, and a day reported again."""

from datetime import date, timedelta

import pytest
from django.utils import timezone

from einvoicing.models import EINVOICE, Report
from einvoicing.reports import irn, report_day
from messaging.models import Delivery
from privacy import retention
from receipts import refunds
from receipts.models import Receipt


def test_the_irn_is_the_receipt_number_without_dashes_the_service_id_and_the_local_date(reporting, receipt_factory):
    late = receipt_factory(transaction_date="2026-11-22T23:30:00Z")  # 00:30 on the 23rd in Lagos
    assert late.receipt_number == "MAMAPU-2026-000001"
    assert irn(late, "94ND90NR", "Africa/Lagos") == "MAMAPU2026000001-94ND90NR-20261123"
    assert irn(late, "94ND90NR", "UTC") == "MAMAPU2026000001-94ND90NR-20261122"


def test_a_till_series_reads_as_letters_and_digits(reporting, receipt_factory):
    tills = receipt_factory(terminal_id="Till 3")
    assert Report.objects.get(receipt=tills).irn == "MAMAPUTILL32026000001-94ND90NR-20261122"


def test_a_day_is_queued_again_but_what_nrs_accepted_or_is_on_its_way(reporting, receipt_factory, identified):
    day = "2026-11-22T09:00:00Z"
    accepted = receipt_factory(token="rcpt_accepted0_aaaaa", short_code="ACCPT1", transaction_date=day)
    refused = receipt_factory(token="rcpt_refused00_aaaaa", short_code="REFUS1", transaction_date=day)
    waiting = receipt_factory(token="rcpt_waiting00_aaaaa", short_code="WAITN1", transaction_date=day)
    receipt_factory(token="rcpt_nextday00_aaaaa", short_code="NEXTD1", transaction_date="2026-11-23T09:00:00Z")
    Report.objects.filter(receipt=accepted).update(state=Report.State.REPORTED)
    Report.objects.filter(receipt=refused).update(state=Report.State.REFUSED, message="NRS answered HTTP 400: …")
    Delivery.objects.filter(channel=EINVOICE).exclude(destination=Report.objects.get(receipt=waiting).irn).update(
        status=Delivery.Status.FAILED
    )
    done = report_day(identified, date(2026, 11, 22))
    assert (done.reported, done.queued, done.sending) == (1, 1, 1)
    report = Report.objects.get(receipt=refused)
    assert (report.state, report.message) == ("waiting", "")
    assert Delivery.objects.filter(channel=EINVOICE, payload_id=report.pk, status="pending").count() == 1


def test_a_day_of_sales_made_before_reporting_was_on_is_reported_with_their_voids(
    merchant, identified, receipt_factory, reporting
):
    reporting.enabled = False
    reporting.save()
    sale = receipt_factory()
    refunds.void(sale, "", keyed=True)
    assert not Report.objects.exists()
    reporting.enabled = True
    reporting.save()
    done = report_day(identified, date(2026, 11, 22))
    assert (done.reported, done.queued, done.sending) == (0, 2, 0)
    assert sorted(Report.objects.values_list("document", flat=True)) == ["cancellation", "invoice"]


def test_a_day_of_a_merchant_that_does_not_report_is_refused(reporting, identified):
    reporting.enabled = False
    reporting.save()
    with pytest.raises(type(reporting).DoesNotExist):
        report_day(identified, date(2026, 11, 22))


def test_retention_removes_a_receipts_reports_and_their_deliveries_with_it(reporting, receipt_factory):
    sale = receipt_factory()
    refunds.refund(sale, refunds.validate_refund({"token": sale.token}), keyed=True)
    other = receipt_factory(token="rcpt_kept00000_aaaaa", short_code="KEPT01")
    Receipt.objects.exclude(pk=other.pk).update(created_at=timezone.now() - timedelta(days=7 * 366))
    retention.apply()
    assert list(Report.objects.values_list("receipt", flat=True)) == [other.pk]
    assert list(Delivery.objects.filter(channel=EINVOICE).values_list("destination", flat=True)) == [
        Report.objects.get().irn
    ]
