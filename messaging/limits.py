"""How often receipts may be sent, and to whom: the guard against using Receco to spam.

Anyone holding a receipt's short code may ask for it to be sent, and a POS may attach
any contact to a sale. So, over any 24 hours:

- one receipt is sent at most RECECO_DELIVERY_RECEIPT_DAILY_LIMIT times;
- one email address or phone number receives at most
  RECECO_DELIVERY_DESTINATION_DAILY_LIMIT receipts, from every receipt and merchant
  together, and of those at most RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY asked
  for without the merchant's API key (a customer's form, an anonymous call);
- the same contact asked for again within DUPLICATE_WINDOW (a double tap, a POS
  retrying) is not sent the receipt twice.

Test receipts go to a sink, never to a person: only the per-receipt limit applies.
``plan`` says what would happen to each wanted delivery, without writing anything; the
caller holds ``lock`` so that concurrent requests cannot both pass a limit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from messaging.models import EMAIL, PHONE_CHANNELS, SMS, WHATSAPP, Delivery
from receipts.contacts import mask_destination
from receipts.models import Receipt

WINDOW = timedelta(days=1)
DUPLICATE_WINDOW = timedelta(minutes=10)

QUEUED = "queued"
DUPLICATE = "duplicate"
LIMITED = "limited"

_FIELDS = {EMAIL: "email", SMS: "phone", WHATSAPP: "phone"}


@dataclass(frozen=True)
class Planned:
    """What becomes of one wanted delivery: QUEUED (it will be sent), DUPLICATE (sent to
    the same contact moments ago, not again) or LIMITED (a daily limit refuses it:
    ``message`` says which, ``retry_after`` in how many seconds it may pass, and
    ``whole_receipt`` whether it is the receipt's limit rather than the destination's)."""

    channel: str
    destination: str
    status: str
    message: str = ""
    retry_after: int = 0
    whole_receipt: bool = False

    @property
    def field(self) -> str:
        """The input that named the destination: "email" or "phone"."""
        return _FIELDS[self.channel]

    def as_data(self) -> dict:
        """The outcome as the API reports it: the destination masked."""
        data = {"channel": self.channel, "destination": mask_destination(self.channel, self.destination)}
        data["status"] = self.status
        if self.message:
            data["message"] = self.message
        return data


def lock(receipt: Receipt, destinations: list[str]) -> None:
    """Serialise, until the transaction ends, the requests that could pass the same
    limit. PostgreSQL: transaction-level advisory locks, taken in a fixed order. SQLite
    serialises every write transaction already (they begin IMMEDIATE)."""
    if connection.vendor != "postgresql":
        return
    names = sorted({f"receco.delivery.receipt:{receipt.pk}", *(f"receco.delivery.to:{d}" for d in destinations)})
    # 64-bit lock ids from a digest: a destination never appears in the query text.
    ids = [int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True) for name in names]
    with connection.cursor() as cursor:
        for lock_id in ids:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id])


def plan(receipt: Receipt, wanted: list[tuple[str, str]], *, keyed: bool, now: datetime) -> list[Planned]:
    """What would become of a delivery to each ``(channel, destination)`` of ``wanted``,
    asked for with the merchant's key or not (``keyed``). Writes nothing."""
    since = now - WINDOW
    sent_today = list(receipt.deliveries.filter(created_at__gte=since).order_by("created_at"))
    left = settings.RECECO_DELIVERY_RECEIPT_DAILY_LIMIT - len(sent_today)
    planned = []
    for channel, destination in wanted:
        if any(
            d.channel == channel and d.destination == destination and d.created_at >= now - DUPLICATE_WINDOW
            for d in sent_today
            if d.status != Delivery.Status.FAILED
        ):
            planned.append(Planned(channel, destination, DUPLICATE))
            continue
        if left <= 0:
            planned.append(Planned(channel, destination, LIMITED, *_receipt_refusal(sent_today, now), True))
            continue
        # Test receipts go to a sink: no person's inbox to protect.
        refusal = receipt.livemode and _destination_refusal(channel, destination, keyed=keyed, since=since, now=now)
        if refusal:
            planned.append(Planned(channel, destination, LIMITED, *refusal))
            continue
        planned.append(Planned(channel, destination, QUEUED))
        left -= 1
    return planned


def _receipt_refusal(sent_today: list[Delivery], now: datetime) -> tuple[str, int]:
    limit = settings.RECECO_DELIVERY_RECEIPT_DAILY_LIMIT
    # A place frees when the oldest delivery of the window leaves it (or, when this very
    # request used the places up, a day from now).
    oldest = sent_today[0].created_at if sent_today else now
    return f"This receipt has been sent {limit} times today, the most allowed", _seconds_until(oldest + WINDOW, now)


def _destination_refusal(channel: str, destination: str, *, keyed: bool, since, now) -> tuple[str, int] | None:
    """Why another live delivery to ``destination`` would pass a daily limit, or None."""
    # A number's limits count its texts and WhatsApp messages together.
    same = {"channel__in": PHONE_CHANNELS} if channel in PHONE_CHANNELS else {"channel": channel}
    recent = Delivery.objects.filter(**same, destination=destination, created_at__gte=since, receipt__livemode=True)
    times = sorted(recent.values_list("created_at", "keyed"))
    field, masked = _FIELDS[channel], mask_destination(channel, destination)
    limit = settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT
    if len(times) >= limit:
        message = f"{field}: {masked} has been sent {limit} receipts today, the most allowed"
        return message, _seconds_until(times[-limit][0] + WINDOW, now)
    without_key = [created for created, was_keyed in times if not was_keyed]
    limit = settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY
    if not keyed and len(without_key) >= limit:
        message = (
            f"{field}: {masked} has been sent {limit} receipts today without a merchant's API key, the most allowed"
        )
        return message, _seconds_until(without_key[-limit] + WINDOW, now)
    return None


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(1, int((moment - now).total_seconds()) + 1)
