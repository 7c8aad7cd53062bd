"""Today at a glance, for the dashboard's home page: each merchant's sales, takings and
deliveries since midnight in the merchant's own time zone, its latest sales, its takings
hour by hour, and what needs attention (sends that failed, receipts the log does not hold
yet, reports to the tax authority refused or not made yet). Sales are counted as
receipts.daily counts them (the Usage page counts the same way): live ones are the
shop's sales, test ones are told apart."""

import zoneinfo
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone

from einvoicing import state as einvoicing_state
from einvoicing.models import EInvoicing
from ledger.standing import not_in_log
from merchants.models import Merchant
from merchants.zones import local_time, zone_name
from messaging.models import Delivery
from receipts.daily import day_bounds, local_day, sales_per_day
from receipts.models import Receipt
from receipts.money import format_amount

# The latest sales Today lists, newest first.
LATEST = 8
# A live receipt is in the log within seconds (ledger.appender); one older than this that
# is not is worth a look.
LOG_GRACE = timedelta(minutes=1)


@dataclass(frozen=True)
class Hour:
    """One hour of today's takings: its start ("09:00", the shop's clock), the takings in
    words, and its share of the busiest hour's (a whole percentage, for its bar)."""

    start: str
    takings: str
    share: int


@dataclass(frozen=True)
class Sale:
    """One of the latest sales as Today lists it: its page's id, its code, what it came to
    and when it was made, in the shop's time zone."""

    pk: int
    short_code: str
    amount: str  # "₦1,300.00"
    time: str  # "14:05 WAT"; a day before today's with its date
    refund: bool


@dataclass(frozen=True)
class Attention:
    """Something to act on: how many, in words, and the list that shows them."""

    count: int
    words: str
    url_query: str  # the query string of the list (the receipts' or the deliveries')
    deliveries: bool = False  # the list is the deliveries', not the receipts'


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
    latest: list[Sale] = field(default_factory=list)  # the latest live receipts, newest first
    hours: list[Hour] = field(default_factory=list)  # takings hour by hour, in the main currency
    hours_currency: str = ""  # that currency, when other currencies were taken too
    attention: list[Attention] = field(default_factory=list)


def today(merchant: Merchant, now: datetime | None = None) -> Today:
    """What ``merchant`` took and sent today, its day as its time zone counts it."""
    now = now or timezone.now()
    local = local_day(merchant, now)
    start, end = day_bounds(merchant.time_zone, local)
    counted = sales_per_day(merchant, local, local)[local]
    rung_up = Receipt.objects.filter(merchant=merchant, livemode=True, transaction_date__gte=start)
    rung_up = rung_up.filter(transaction_date__lt=end, void__isnull=True)
    by_hour = (
        rung_up.order_by()
        .annotate(hour=TruncHour("transaction_date", tzinfo=zoneinfo.ZoneInfo(merchant.time_zone)))
        .values("hour", "currency")
        .annotate(
            sales=Sum("total_amount", filter=Q(refund_of__isnull=True)),
            refunds=Sum("total_amount", filter=Q(refund_of__isnull=False)),
        )
    )
    net = defaultdict(int)
    hourly: dict[str, dict[datetime, int]] = defaultdict(lambda: defaultdict(int))
    for row in by_hour:
        amount = (row["sales"] or 0) - (row["refunds"] or 0)
        net[row["currency"]] += amount
        hourly[row["currency"]][row["hour"]] += amount
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
        latest_sales(merchant, local),
        *_hours(hourly, merchant.time_zone, now),
        attention(merchant, start, now, deliveries["failed"]),
    )


def latest_sales(merchant: Merchant, day: date) -> list[Sale]:
    """The merchant's latest live receipts (sales and refunds), newest first, on its
    ``day`` by its time only: one query that the merchant's index answers."""
    tz = zoneinfo.ZoneInfo(merchant.time_zone)
    rows = Receipt.objects.filter(merchant=merchant, livemode=True).order_by("-created_at")
    rows = rows.only("pk", "short_code", "total_amount", "currency", "transaction_date", "refund_of_id")[:LATEST]
    return [
        Sale(
            receipt.pk,
            receipt.short_code,
            format_amount(receipt.total_amount, receipt.currency),
            local_time(
                receipt.transaction_date,
                merchant.time_zone,
                "H:i T" if receipt.transaction_date.astimezone(tz).date() == day else "j M, H:i T",
            ),
            receipt.refund_of_id is not None,
        )
        for receipt in rows
    ]


def _hours(hourly: dict[str, dict[datetime, int]], zone: str, now: datetime) -> tuple[list[Hour], str]:
    """Today's hours from the first with a sale to the present one, in the currency taken
    most, and that currency when others were taken too ("" otherwise)."""
    if not hourly:
        return [], ""
    currency = max(hourly, key=lambda code: sum(abs(amount) for amount in hourly[code].values()))
    tz = zoneinfo.ZoneInfo(zone)
    amounts = {moment.astimezone(tz).hour: amount for moment, amount in hourly[currency].items()}
    first, last = min(amounts), max(max(amounts), now.astimezone(tz).hour)
    top = max((abs(amount) for amount in amounts.values()), default=0) or 1
    hours = [
        Hour(
            f"{hour:02d}:00",
            format_amount(amounts.get(hour, 0), currency),
            round(100 * max(amounts.get(hour, 0), 0) / top),
        )
        for hour in range(first, last + 1)
    ]
    return hours, currency if len(hourly) > 1 else ""


def attention(merchant: Merchant, start: datetime, now: datetime, failed: int) -> list[Attention]:
    """What needs the shop's attention today, each with the list that shows it: sends that
    failed for good, live receipts older than LOG_GRACE that the log does not hold yet, and,
    for a shop that reports to NRS, reports refused and not made yet."""
    found = []
    if failed:
        words = f"{failed} receipt{'s' if failed != 1 else ''} could not be sent to the customer"
        found.append(Attention(failed, words, f"status__exact=failed&merchant={merchant.pk}", deliveries=True))
    unlogged = not_in_log(Receipt.objects.filter(merchant=merchant, created_at__gte=start))
    unlogged = unlogged.filter(created_at__lt=now - LOG_GRACE).count()
    if unlogged:
        words = f"{unlogged} receipt{'s' if unlogged != 1 else ''} not in the receipt log yet"
        found.append(Attention(unlogged, words, f"logged=no&merchant={merchant.pk}"))
    if reports_to_nrs(merchant):
        counts = einvoicing_state.counts(merchant, start)
        if counts.refused:
            words = f"{counts.refused} report{'s' if counts.refused != 1 else ''} refused by NRS"
            found.append(Attention(counts.refused, words, f"report=refused&merchant={merchant.pk}"))
        if counts.waiting:
            words = f"{counts.waiting} report{'s' if counts.waiting != 1 else ''} to NRS not made yet"
            found.append(Attention(counts.waiting, words, f"report=waiting&merchant={merchant.pk}"))
    return found


def reports_to_nrs(merchant: Merchant) -> bool:
    """Whether the merchant reports its receipts to NRS (its e-invoicing is on)."""
    return EInvoicing.objects.filter(merchant_id=merchant.pk, enabled=True).exists()


def merchant_currency(merchant: Merchant) -> str:
    """The currency of the merchant's latest receipt (NGN before its first)."""
    latest = Receipt.objects.filter(merchant=merchant).order_by("-created_at").values_list("currency", flat=True)
    return latest.first() or "NGN"
