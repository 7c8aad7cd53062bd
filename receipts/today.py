"""Today at a glance, for the dashboard's home page: each merchant's sales, takings and
deliveries since midnight in the merchant's own time zone. Sales are counted as
receipts.daily counts them (the Usage page counts the same way): live ones are the
shop's sales, test ones are told apart."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Count, Q, Sum
from django.utils import timezone

from merchants.models import Merchant
from merchants.zones import zone_name
from messaging.models import Delivery
from receipts.daily import day_bounds, local_day, sales_per_day
from receipts.models import Receipt
from receipts.money import format_amount


@dataclass(frozen=True)
class Today:
    merchant: Merchant
    day: date
    zone: str  # the zone in words with its abbreviation today, e.g. "Lagos time (WAT)"
    sales: int  # live sales rung up today, voided ones left out (receipts.daily)
    test_sales: int  # test sales, counted the same way
    takings: list[str]  # live sales less refunds, one amount per currency ("₦12,500.00")
    sent: int  # receipts delivered by email or text today
    failed: int  # deliveries that failed for good today


def today(merchant: Merchant, now: datetime | None = None) -> Today:
    """What ``merchant`` took and sent today, its day as its time zone counts it."""
    now = now or timezone.now()
    local = local_day(merchant, now)
    start, end = day_bounds(merchant.time_zone, local)
    counted = sales_per_day(merchant, local, local)[local]
    rung_up = Receipt.objects.filter(merchant=merchant, livemode=True, transaction_date__gte=start)
    rung_up = rung_up.filter(transaction_date__lt=end, void__isnull=True)
    sums = (
        rung_up.order_by()
        .values("currency")
        .annotate(
            sales=Sum("total_amount", filter=Q(refund_of__isnull=True)),
            refunds=Sum("total_amount", filter=Q(refund_of__isnull=False)),
        )
    )
    net = defaultdict(int)
    for row in sums:
        net[row["currency"]] += (row["sales"] or 0) - (row["refunds"] or 0)
    deliveries = Delivery.objects.filter(receipt__merchant=merchant, receipt__livemode=True)
    deliveries = deliveries.filter(created_at__gte=start, created_at__lt=end).aggregate(
        sent=Count("id", filter=Q(status=Delivery.Status.SENT)),
        failed=Count("id", filter=Q(status=Delivery.Status.FAILED)),
    )
    takings = [format_amount(amount, currency) for currency, amount in sorted(net.items())]
    return Today(
        merchant,
        local,
        zone_name(merchant.time_zone, now),
        counted.live,
        counted.test,
        takings or [format_amount(0, merchant_currency(merchant))],
        deliveries["sent"],
        deliveries["failed"],
    )


def merchant_currency(merchant: Merchant) -> str:
    """The currency of the merchant's latest receipt (NGN before its first)."""
    latest = Receipt.objects.filter(merchant=merchant).order_by("-created_at").values_list("currency", flat=True)
    return latest.first() or "NGN"
