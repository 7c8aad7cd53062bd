"""Today's figures for the dashboard's home page, counted in the merchant's time zone."""

from datetime import UTC, datetime

import pytest

from messaging.models import Delivery
from receipts.refunds import refund, validate_refund, void
from receipts.today import today

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
