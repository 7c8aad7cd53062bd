"""What "receipts today" means, in one place: the dashboard's Today page and a merchant's
Usage page both count with ``sales_per_day``, so they cannot disagree about a day.

A day's receipts are the **sales** (not refund receipts) whose **sale time** falls between
midnight and midnight **in the merchant's time zone**, **voided sales left out**, counted
apart for **live** and **test** receipts. A sale voided later leaves the day it was
rung up on; a refund is a receipt of its own and is taken off the takings, not the count.
"""

import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from merchants.models import Merchant
from receipts.models import Receipt

# How the pages state it, next to the numbers.
MEANING = (
    "sales rung up between midnight and midnight in the shop's time zone; voided sales and refund receipts "
    "are not counted"
)


@dataclass(frozen=True)
class DayCount:
    live: int = 0
    test: int = 0


def day_bounds(zone: str, day: date) -> tuple[datetime, datetime]:
    """The start of ``day`` and of the day after, as aware datetimes in the time zone ``zone``."""
    tz = zoneinfo.ZoneInfo(zone)
    return datetime.combine(day, time.min, tzinfo=tz), datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz)


def local_day(merchant: Merchant, now: datetime) -> date:
    """The merchant's date at the moment ``now``."""
    return now.astimezone(zoneinfo.ZoneInfo(merchant.time_zone)).date()


def days_sales(merchant: Merchant):
    """The merchant's receipts that count as sales on the day of their sale time: sales,
    not refund receipts, and not voided."""
    return Receipt.objects.filter(merchant=merchant, refund_of__isnull=True, void__isnull=True)


def sales_per_day(merchant: Merchant, first: date, last: date) -> dict[date, DayCount]:
    """The merchant's sales on each of its days from ``first`` to ``last`` (both included),
    live and test apart; every day in the range is a key, days without sales count 0.

    One query, grouped by the sale's local date.
    """
    start, _ = day_bounds(merchant.time_zone, first)
    _, end = day_bounds(merchant.time_zone, last)
    rows = (
        days_sales(merchant)
        .filter(transaction_date__gte=start, transaction_date__lt=end)
        .annotate(day=TruncDate("transaction_date", tzinfo=zoneinfo.ZoneInfo(merchant.time_zone)))
        .order_by()
        .values("day")
        .annotate(live=Count("id", filter=Q(livemode=True)), test=Count("id", filter=Q(livemode=False)))
    )
    counts = {first + timedelta(days=offset): DayCount() for offset in range((last - first).days + 1)}
    for row in rows:
        if row["day"] in counts:
            counts[row["day"]] = DayCount(row["live"], row["test"])
    return counts


def recent_sales(merchant: Merchant, days: int, now: datetime) -> dict[date, DayCount]:
    """``sales_per_day`` over the merchant's last ``days`` days, today (at ``now``) the last."""
    last = local_day(merchant, now)
    return sales_per_day(merchant, last - timedelta(days=days - 1), last)
