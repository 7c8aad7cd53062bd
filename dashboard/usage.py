"""What a merchant's receipts cost to send: text-message parts and WhatsApp messages per
UTC day, from the deliveries the outbox recorded sent (Delivery.parts: an SMS's parts,
counted as the providers bill them, GSM-7 160 characters or 153 a part of a longer one;
one per WhatsApp template message). Test receipts go to the sink and cost nothing.
The dashboard's Usage page shows them beside the API calls."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from messaging.models import SMS, WHATSAPP, Delivery


@dataclass(frozen=True)
class DayCost:
    day: date  # UTC
    sms_parts: int
    whatsapp_messages: int


def daily_costs(merchant_id: int, days: int = 30, now: datetime | None = None) -> list[DayCost]:
    """SMS parts and WhatsApp messages sent for ``merchant_id`` on each of the last ``days``
    UTC days, today included, oldest first."""
    now = now or timezone.now()
    today = now.astimezone(UTC).date()
    period = [today - timedelta(days=offset) for offset in range(days - 1, -1, -1)]
    since = datetime.combine(period[0], datetime.min.time(), tzinfo=UTC)
    rows = (
        Delivery.objects.filter(merchant_id=merchant_id, parts__gt=0, sent_at__gte=since, channel__in=[SMS, WHATSAPP])
        .annotate(day=TruncDate("sent_at", tzinfo=UTC))
        .values("day", "channel")
        .annotate(parts=Sum("parts"))
    )
    counted = {(row["day"], row["channel"]): row["parts"] for row in rows}
    return [DayCost(day, counted.get((day, SMS), 0), counted.get((day, WHATSAPP), 0)) for day in period]
