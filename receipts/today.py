"""Today at a glance, for the dashboard's home page: each merchant's receipts, takings and
deliveries since midnight in the merchant's own time zone. Live receipts only: test
receipts are not sales."""

import zoneinfo
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Q, Sum
from django.utils import timezone

from merchants.models import Merchant
from messaging.models import Delivery
from receipts.models import Receipt
from receipts.money import format_amount


@dataclass(frozen=True)
class Today:
    merchant: Merchant
    day: date
    zone: str  # the zone's abbreviation today, e.g. WAT
    sales: int  # sales rung up today, voided ones left out
    takings: list[str]  # sales less refunds, one amount per currency ("₦12,500.00")
    sent: int  # receipts delivered by email or text today
    failed: int  # deliveries that failed for good today


def day_bounds(merchant: Merchant, now: datetime) -> tuple[date, datetime, datetime]:
    """The merchant's local date at ``now`` and that day's start and end as aware datetimes."""
    zone = zoneinfo.ZoneInfo(merchant.time_zone)
    local = now.astimezone(zone).date()
    start = datetime.combine(local, time.min, tzinfo=zone)
    return local, start, datetime.combine(local + timedelta(days=1), time.min, tzinfo=zone)


def today(merchant: Merchant, now: datetime | None = None) -> Today:
    """What ``merchant`` took and sent today, its day as its time zone counts it."""
    now = now or timezone.now()
    local, start, end = day_bounds(merchant, now)
    rung_up = Receipt.objects.filter(merchant=merchant, livemode=True, transaction_date__gte=start)
    rung_up = rung_up.filter(transaction_date__lt=end, void__isnull=True)
    sums = (
        rung_up.order_by()
        .values("currency")
        .annotate(
            sales=Sum("total_amount", filter=Q(refund_of__isnull=True)),
            refunds=Sum("total_amount", filter=Q(refund_of__isnull=False)),
            count=Count("id", filter=Q(refund_of__isnull=True)),
        )
    )
    net, sales = defaultdict(int), 0
    for row in sums:
        net[row["currency"]] += (row["sales"] or 0) - (row["refunds"] or 0)
        sales += row["count"]
    deliveries = Delivery.objects.filter(receipt__merchant=merchant, receipt__livemode=True)
    deliveries = deliveries.filter(created_at__gte=start, created_at__lt=end).aggregate(
        sent=Count("id", filter=Q(status=Delivery.Status.SENT)),
        failed=Count("id", filter=Q(status=Delivery.Status.FAILED)),
    )
    takings = [format_amount(amount, currency) for currency, amount in sorted(net.items())]
    return Today(
        merchant,
        local,
        now.astimezone(zoneinfo.ZoneInfo(merchant.time_zone)).tzname() or merchant.time_zone,
        sales,
        takings or [format_amount(0, merchant_currency(merchant))],
        deliveries["sent"],
        deliveries["failed"],
    )


def merchant_currency(merchant: Merchant) -> str:
    """The currency of the merchant's latest receipt (NGN before its first)."""
    latest = Receipt.objects.filter(merchant=merchant).order_by("-created_at").values_list("currency", flat=True)
    return latest.first() or "NGN"
