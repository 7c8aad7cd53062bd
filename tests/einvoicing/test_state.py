"""What the pages will show: a receipt's state, its IRN and NRS QR code once reported, and
a merchant's counts of what is waiting or refused."""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from einvoicing import state
from einvoicing.models import Report
from receipts import refunds
from receipts.models import Receipt


def _set(receipt, document="invoice", **values):
    Report.objects.filter(receipt=receipt, document=document).update(**values)


def test_a_receipt_not_reported_at_all_has_no_state(receipt, test_receipt):
    assert state.state_of(receipt) is None
    assert state.stamp_of(test_receipt) is None


def test_a_sale_waits_is_reported_or_refused_with_nrss_message(reporting, receipt_factory):
    sale = receipt_factory()
    waiting = state.state_of(sale)
    assert (waiting.state, waiting.irn, waiting.message, waiting.reported) == (
        "waiting",
        "MAMAPU2026000001-94ND90NR-20261122",
        "",
        False,
    )
    assert state.stamp_of(sale) is None  # no IRN nor NRS QR code on the receipt before NRS accepted it
    _set(sale, state="refused", message="NRS answered HTTP 400: unable to validate api key")
    assert (state.state_of(sale).state, state.state_of(sale).message) == (
        "refused",
        "NRS answered HTTP 400: unable to validate api key",
    )
    _set(sale, state="reported", message="", qr_payload="UVIgcGF5bG9hZA==")
    reported = state.state_of(sale)
    assert (reported.state, reported.message, reported.reported) == ("reported", "", True)
    stamp = state.stamp_of(sale)
    assert (stamp.irn, stamp.qr_payload) == ("MAMAPU2026000001-94ND90NR-20261122", "UVIgcGF5bG9hZA==")
    assert stamp.png().startswith(b"\x89PNG")
    assert "<title>NRS e-invoice QR code</title>" in stamp.svg()


def test_a_voided_sale_waits_until_its_cancellation_is_reported_and_keeps_its_stamp(reporting, receipt_factory):
    sale = receipt_factory()
    _set(sale, state="reported", qr_payload="UVI=")
    refunds.void(sale, "", keyed=True)
    voided = state.state_of(sale)
    assert (voided.state, [report.document for report in voided.reports]) == ("waiting", ["invoice", "cancellation"])
    _set(sale, "cancellation", state="refused", message="NRS answered HTTP 404: invoice not found")
    assert state.state_of(sale).message == "NRS answered HTTP 404: invoice not found"
    assert state.stamp_of(sale).irn == voided.irn


def test_a_list_pages_states_take_one_query(reporting, receipt_factory):
    receipts = [receipt_factory(token=f"rcpt_list{n:05d}_aaaaaa", short_code="") for n in range(3)]
    with CaptureQueriesContext(connection) as queries:
        found = state.states_of([receipt.pk for receipt in receipts])
    assert len(queries.captured_queries) == 1
    assert sorted(found) == sorted(receipt.pk for receipt in receipts)


def test_counts_and_the_filter_of_refused_ones(reporting, receipt_factory, other_merchant):
    first, second, third = (receipt_factory(token=f"rcpt_count{n:04d}_aaaaaa", short_code="") for n in range(3))
    _set(first, state="refused")
    _set(second, state="reported")
    Report.objects.filter(receipt=third).update(created_at=timezone.now() - timedelta(days=2))
    merchant = first.merchant
    assert state.counts(merchant) == state.Counts(waiting=1, refused=1)
    assert state.counts(merchant, since=timezone.now() - timedelta(days=1)) == state.Counts(waiting=0, refused=1)
    assert state.counts(other_merchant) == state.Counts(0, 0)
    assert list(state.refused(Receipt.objects.filter(merchant=merchant))) == [first]


def test_the_filter_of_those_not_reported_yet_leaves_out_the_refused(reporting, receipt_factory):
    sales = [receipt_factory(token=f"rcpt_wait{n:05d}_aaaaaa", short_code="") for n in range(3)]
    _set(sales[0], state="refused")
    _set(sales[1], state="reported")
    merchant = sales[0].merchant
    assert list(state.waiting(Receipt.objects.filter(merchant=merchant))) == [sales[2]]
    refunds.void(sales[1], "Rung up twice", keyed=True)  # its cancellation is not reported yet
    assert set(state.waiting(Receipt.objects.filter(merchant=merchant))) == {sales[1], sales[2]}
