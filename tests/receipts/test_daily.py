"""One meaning of "receipts today": the Today page and the Usage page count the same
sales for the same day of the merchant (receipts.daily), around midnight included."""

from datetime import UTC, date, datetime, timedelta

import pytest

from dashboard.today import today
from receipts.daily import DayCount, recent_sales, sales_per_day
from receipts.refunds import refund, validate_refund, void

pytestmark = pytest.mark.django_db

# Lagos is UTC+1 all year (WAT): its 26 November starts at 23:00 UTC on the 25th.
MIDNIGHT = datetime(2026, 11, 25, 23, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)


def _sale(receipt_factory, n, when: datetime, **overrides):
    return receipt_factory(
        token=f"rcpt_daily{n:03d}_aaaaaa", short_code=f"DAILY{n}", transaction_date=when.isoformat(), **overrides
    )


def _test_sale(merchant, sale, n, when: datetime):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    body = {**sale, "token": f"rcpt_dtest{n:03d}_aaaaaa", "short_code": f"DTEST{n}"}
    body["transaction_date"] = when.isoformat()
    return create_receipt(merchant, validate_sale(body), livemode=False).receipt


@pytest.fixture
def around_midnight(receipt_factory, merchant, sale):
    """Sales either side of midnight in Lagos, a voided one, a refund and test sales."""
    _sale(receipt_factory, 1, MIDNIGHT - SECOND)  # 23:59:59 on the 25th
    _sale(receipt_factory, 2, MIDNIGHT)  # 00:00:00 on the 26th
    _sale(receipt_factory, 3, MIDNIGHT + timedelta(hours=10))
    refunded = _sale(receipt_factory, 4, MIDNIGHT + timedelta(hours=11))
    void(_sale(receipt_factory, 5, MIDNIGHT + timedelta(hours=12)), "Rung up twice", keyed=True)
    refund(refunded, validate_refund({"token": refunded.token, "items": [{"index": 1, "quantity": 1}]}), keyed=True)
    _test_sale(merchant, sale, 1, MIDNIGHT + timedelta(hours=1))
    _test_sale(merchant, sale, 2, MIDNIGHT - timedelta(hours=1))


def test_it_counts_sales_by_the_merchants_day_live_and_test_apart(merchant, around_midnight):
    counts = sales_per_day(merchant, date(2026, 11, 24), date(2026, 11, 26))
    # The 26th: sales 2, 3 and 4 (the refund receipt and the voided sale are not sales).
    assert counts == {
        date(2026, 11, 24): DayCount(0, 0),
        date(2026, 11, 25): DayCount(live=1, test=1),
        date(2026, 11, 26): DayCount(live=3, test=1),
    }


@pytest.mark.parametrize(
    "now",
    [MIDNIGHT - SECOND, MIDNIGHT, MIDNIGHT + SECOND, MIDNIGHT + timedelta(hours=23, minutes=59, seconds=59)],
    ids=["23:59:59", "00:00:00", "00:00:01", "23:59:59-next"],
)
def test_today_and_usage_agree_around_midnight_in_lagos(merchant, around_midnight, now):
    figures = today(merchant, now)
    usage = recent_sales(merchant, 30, now)
    assert list(usage)[-1] == figures.day
    assert (figures.sales, figures.test_sales) == (usage[figures.day].live, usage[figures.day].test)
    expected = {date(2026, 11, 25): (1, 1), date(2026, 11, 26): (3, 1)}[figures.day]
    assert (figures.sales, figures.test_sales) == expected


def test_both_pages_show_the_same_count_for_today(client, owner, merchant, receipt_factory, sale):
    import re

    from django.utils import timezone

    now = timezone.now()
    for n in range(3):
        _sale(receipt_factory, n, now - timedelta(seconds=n + 1))
    void(_sale(receipt_factory, 9, now - timedelta(seconds=30)), "Rung up twice", keyed=True)
    _test_sale(merchant, sale, 1, now - timedelta(seconds=5))
    client.force_login(owner)
    home = client.get("/admin/").content.decode()
    usage = client.get(f"/admin/merchants/merchant/{merchant.pk}/usage/").content.decode()
    assert re.search(r"<dt>Receipts today</dt><dd>3</dd>", home)
    assert "Test sales today, not counted: 1." in home
    cells = r'<tr><th scope="row" class="nowrap">[^<]+</th><td class="number">(\d+)</td><td class="number">(\d+)</td>'
    rows = re.findall(cells, usage)
    assert rows[0] == ("3", "1")  # newest first: today
    meaning = "sales rung up between midnight and midnight in the shop&#x27;s time zone"
    assert meaning in home
    assert meaning in usage
