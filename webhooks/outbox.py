"""Recording events: the outbox of webhooks.

``emit`` writes the event and one delivery per endpoint that wants it in the transaction
of the change it reports, and queues the deliveries on the task runner: with the
database backend in that same transaction, otherwise once it commits (webhooks.tasks).
A crash in between loses nothing: the sweep (``requeue_due``, the ``sendwebhooks``
command) finds the delivery still pending and queues it again.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

import orjson
from django.db import transaction
from django.utils import timezone

from merchants.models import Merchant
from receco.lib.queries import create
from receipts.models import Receipt
from receipts.representation import iso_utc, receipt_data
from webhooks.listeners import listening
from webhooks.models import Delivery, Event, EventType
from webhooks.tasks import enqueue, enqueue_with_change

logger = logging.getLogger(__name__)

# A pending or sending delivery untouched for this long lost its task (a crash between
# commit and enqueue, a killed worker): the sweep queues it again.
STALE_AFTER = timedelta(minutes=5)


def emit(event_type: EventType, receipt: Receipt, merchant: Merchant | None = None) -> Event | None:
    """Record a ``event_type`` event about ``receipt`` for each of its merchant's endpoints
    that wants it, as part of the transaction in progress (call it inside the change's
    ``transaction.atomic``). ``merchant`` is the receipt's, if the caller holds it (its
    endpoints are then known without a query: webhooks.listeners). Returns the event, or
    None when no endpoint wants it.

    The event carries the receipt as getReceipt returns it to its merchant, as it is now.
    """
    endpoint_ids = listening(merchant or receipt.merchant, event_type)
    if not endpoint_ids:
        return None
    now = timezone.now()
    public_id = "evt_" + secrets.token_hex(12)
    body = {
        "id": public_id,
        "type": str(event_type),
        "created": iso_utc(now),
        "livemode": receipt.livemode,
        "data": {"object": receipt_data(receipt, reveal_contact=True)},
    }
    # The compiled inserts of receco.lib.queries: this runs in createReceiptFromPOS.
    event = create(
        Event,
        public_id=public_id,
        merchant_id=receipt.merchant_id,
        receipt=receipt,
        type=event_type,
        livemode=receipt.livemode,
        body=orjson.dumps(body).decode(),
        created_at=now,
    )
    for endpoint_id in endpoint_ids:  # usually one
        enqueue_with_change(create(Delivery, event=event, endpoint_id=endpoint_id).pk)
    return event


def resend(delivery: Delivery) -> Delivery:
    """Send ``delivery``'s event to its endpoint once more, as a new delivery; return it."""
    with transaction.atomic():
        again = Delivery.objects.create(event_id=delivery.event_id, endpoint_id=delivery.endpoint_id)
        enqueue_with_change(again.pk)
    return again


def requeue_due(now: datetime | None = None) -> int:
    """Queue again every delivery whose retry time has come or whose task was lost; return how many.

    With the immediate task backend retries wait for this; with the database backend the
    worker schedules them itself and this is the safety net.
    """
    now = now or timezone.now()
    count = 0
    for delivery in Delivery.objects.due(now, now - STALE_AFTER).only("pk", "status"):
        if delivery.status != Delivery.Status.RETRYING:
            # A lost task or a dead worker: make it claimable again.
            Delivery.objects.filter(pk=delivery.pk, status=delivery.status).update(
                status=Delivery.Status.RETRYING, updated_at=now
            )
        enqueue(delivery.pk)
        count += 1
    return count
