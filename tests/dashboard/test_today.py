"""Today's figures for the dashboard's home page, counted in the merchant's time zone."""

from datetime import UTC, datetime

import pytest

from dashboard.today import today
from messaging.models import Delivery
from receipts.refunds import refund, validate_refund, void

pytestmark = pytest.mark.django_db

# 23:30 UTC on the 24th is 00:30 on the 25th in Lagos (WAT, UTC+1).
NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def _sale(receipt_factory, n, when, **overrides):
    return receipt_factory(
        token=f"rcpt_today{n:03d}_aaaaaa", short_code=f"TODAY{n}", transaction_date=when, **overrides
    )


def test_it_counts_sales_and_takings_since_local_midnight(receipt_factory, merchant):
    _sale(receipt_factory, 1, "2026-11-24T23:30:00Z", total_amount=130000)  # 00:30 WAT today
    _sale(receipt_factory, 2, "2026-11-25T08:00:00Z", total_amount=50000)
    _sale(receipt_factory, 3, "2026-11-24T22:59:00Z", total_amount=99900)  # 23:59 WAT yesterday
    figures = today(merchant, NOW)
    assert (figures.day.isoformat(), figures.zone) == ("2026-11-25", "Lagos time (WAT)")
    assert figures.sales == 2
    assert figures.takings == ["₦1,800.00"]


def test_the_day_is_the_merchants(receipt_factory, merchant):
    merchant.time_zone = "America/New_York"
    merchant.save()
    _sale(receipt_factory, 1, "2026-11-24T23:30:00Z")  # 18:30 EST on the 24th: yesterday there
    figures = today(merchant, datetime(2026, 11, 25, 4, 0, tzinfo=UTC))  # 23:00 EST on the 24th
    assert (figures.day.isoformat(), figures.zone, figures.sales) == ("2026-11-24", "New York time (EST)", 1)


def test_voids_and_test_receipts_are_left_out_and_refunds_taken_off(receipt_factory, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.models import Receipt
    from receipts.validation import validate_sale

    kept = _sale(receipt_factory, 1, "2026-11-25T08:00:00Z")  # ₦1,300.00: Jollof rice ×2 and a Chapman
    void(_sale(receipt_factory, 2, "2026-11-25T08:05:00Z"), "Rung up twice", keyed=True)
    test_sale = {**sale, "token": "rcpt_today900_aaaaaa", "short_code": "TODAY9"}
    create_receipt(merchant, validate_sale({**test_sale, "transaction_date": "2026-11-25T08:10:00Z"}), livemode=False)
    request = validate_refund({"token": kept.token, "items": [{"index": 1, "quantity": 1}]})  # the Chapman, ₦300.00
    made = refund(kept, request, keyed=True).receipt
    Receipt.objects.filter(pk=made.pk).update(transaction_date=datetime(2026, 11, 25, 8, 30, tzinfo=UTC))
    figures = today(merchant, NOW)
    assert (figures.sales, figures.test_sales) == (1, 1)
    assert figures.takings == ["₦1,000.00"]


def test_it_counts_deliveries_sent_and_failed(receipt_factory, merchant):
    receipt = _sale(receipt_factory, 1, "2026-11-25T08:00:00Z")
    for status in (Delivery.Status.SENT, Delivery.Status.SENT, Delivery.Status.FAILED, Delivery.Status.PENDING):
        delivery = Delivery.objects.create(
            merchant=receipt.merchant, receipt=receipt, channel="email", destination="a@example.com", status=status
        )
        Delivery.objects.filter(pk=delivery.pk).update(created_at=NOW)
    figures = today(merchant, NOW)
    assert (figures.sent, figures.failed) == (2, 1)


def test_a_merchant_with_no_sales_took_nothing(merchant):
    assert today(merchant, NOW).takings == ["₦0.00"]


def test_it_lists_the_latest_sales_newest_first_in_the_shops_time(receipt_factory, merchant, test_receipt):
    for n, when in enumerate(["2026-11-25T07:00:00Z", "2026-11-25T08:05:00Z", "2026-11-24T12:00:00Z"], 1):
        _sale(receipt_factory, n, when, total_amount=10000 * n)
    latest = today(merchant, NOW).latest
    # Newest stored first; a test receipt is no sale; yesterday's with its day.
    assert [(sale.short_code, sale.amount, sale.time) for sale in latest] == [
        ("TODAY3", "₦300.00", "24 Nov, 13:00 WAT"),
        ("TODAY2", "₦200.00", "09:05 WAT"),
        ("TODAY1", "₦100.00", "08:00 WAT"),
    ]


def test_it_sums_takings_hour_by_hour_in_the_shops_time_zone(receipt_factory, merchant):
    _sale(receipt_factory, 1, "2026-11-24T23:30:00Z", total_amount=130000)  # 00:30 WAT
    _sale(receipt_factory, 2, "2026-11-25T02:10:00Z", total_amount=50000)  # 03:10 WAT
    _sale(receipt_factory, 3, "2026-11-25T02:50:00Z", total_amount=80000)  # 03:50 WAT
    hours = today(merchant, datetime(2026, 11, 25, 4, 20, tzinfo=UTC)).hours  # 05:20 WAT
    assert [(hour.start, hour.takings, hour.share) for hour in hours] == [
        ("00:00", "₦1,300.00", 100),
        ("01:00", "₦0.00", 0),
        ("02:00", "₦0.00", 0),
        ("03:00", "₦1,300.00", 100),
        ("04:00", "₦0.00", 0),
        ("05:00", "₦0.00", 0),
    ]


def test_it_says_what_needs_attention_with_the_list_of_each(receipt_factory, merchant):
    from django.db.models import F

    from einvoicing.models import EInvoicing, Report
    from ledger.models import Leaf
    from receipts.models import Receipt

    logged = _sale(receipt_factory, 1, "2026-11-25T07:00:00Z")
    unlogged = _sale(receipt_factory, 2, "2026-11-25T07:10:00Z")
    recent = _sale(receipt_factory, 3, "2026-11-25T08:59:30Z")
    Receipt.objects.filter(pk__in=[logged.pk, unlogged.pk]).update(created_at=datetime(2026, 11, 25, 8, 0, tzinfo=UTC))
    Receipt.objects.filter(pk=recent.pk).update(created_at=F("transaction_date"))  # 30 s ago: the log's grace
    Leaf.objects.create(
        index=0, kind="receipt", receipt=logged, leaf_hash=b"0" * 32, content_digest=b"0" * 32,
        signature=b"0" * 64, kid="k",
    )  # fmt: skip
    failed = Delivery.objects.create(
        merchant=merchant, receipt=logged, channel="sms", destination="+2348031234567", status=Delivery.Status.FAILED
    )
    Delivery.objects.filter(pk=failed.pk).update(created_at=NOW)
    assert [item.words for item in today(merchant, NOW).attention] == [
        "1 receipt could not be sent to the customer",
        "1 receipt not in the receipt log yet",
    ]
    # Reports to NRS, once the shop reports: refused and not made yet.
    EInvoicing.objects.create(merchant=merchant, enabled=True, business_id="b1", service_id="94ND90NR")
    for receipt, state in ((logged, "refused"), (unlogged, "waiting"), (recent, "waiting")):
        report = Report.objects.create(
            merchant=merchant, receipt=receipt, document="invoice", irn=f"{receipt.short_code}-94ND90NR-20261125",
            state=state, message="Invalid TIN" if state == "refused" else "",
        )  # fmt: skip
        Report.objects.filter(pk=report.pk).update(created_at=NOW)
    attention = today(merchant, NOW).attention
    assert [(item.words, item.url_query, item.deliveries) for item in attention] == [
        ("1 receipt could not be sent to the customer", f"status__exact=failed&merchant={merchant.pk}", True),
        ("1 receipt not in the receipt log yet", f"logged=no&merchant={merchant.pk}", False),
        ("1 report refused by NRS", f"report=refused&merchant={merchant.pk}", False),
        ("2 reports to NRS not made yet", f"report=waiting&merchant={merchant.pk}", False),
    ]


def test_nothing_needs_attention_on_a_quiet_day(merchant):
    assert today(merchant, NOW).attention == []
