"""Recording events: what happens to a merchant's receipts, for its endpoints.

``RecordEvent`` is the receipts hook (receipts.hooks) that records an event of each
change for the merchant's endpoints that want it, in the change's transaction, with a
pending delivery of it to each in the one outbox (messaging.outbox), which sends them
once it commits. On PostgreSQL the event and its deliveries are one INSERT statement
(``emit``), and a new sale with them is part of the sale's one statement (``statement``):
a sale with an endpoint costs one round trip, like one without. A failed delivery to a
customer is an event too (the outbox's ``delivery_failed``, connected in ``connect_signals``).
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime

import orjson
from django.db.models.signals import post_delete
from django.utils import timezone

from einvoicing import signals as einvoicing_signals
from merchants.models import Merchant
from messaging import outbox
from messaging.signals import delivery_failed
from receipts import hooks
from receipts.models import Receipt
from receipts.rendering.representation import iso_utc, receipt_data
from webhooks.listeners import listening
from webhooks.models import WEBHOOK, Delivery, Endpoint, Event, EventType

logger = logging.getLogger(__name__)

# The event each change of a receipt makes.
EVENT_OF = {
    hooks.CREATED: EventType.RECEIPT_CREATED,
    hooks.CONTACT_UPDATED: EventType.RECEIPT_CONTACT_UPDATED,
    hooks.REFUNDED: EventType.RECEIPT_REFUNDED,
    hooks.VOIDED: EventType.RECEIPT_VOIDED,
}


class RecordEvent(hooks.Hook):
    """The receipts hook: an event of each change, for the endpoints that want it. Its
    outcome, ``event``, is the event's id (evt_...)."""

    name = "event"

    def wants(self, change: hooks.Change) -> bool:
        event_type = EVENT_OF.get(change.kind)
        return event_type is not None and bool(listening(change.owner, event_type))

    def write(self, change: hooks.Change) -> str | None:
        return emit(EVENT_OF[change.kind], _subject(change), change.merchant)


def _subject(change: hooks.Change) -> Receipt:
    """What the event is about: the sale, for a refund (its status and refunds as they are now)."""
    return change.sale if change.kind == hooks.REFUNDED else change.receipt


def emit(
    event_type: EventType, receipt: Receipt, merchant: Merchant | None = None, *, extra: dict | None = None
) -> str | None:
    """Record a ``event_type`` event about ``receipt`` for each of its merchant's endpoints
    that wants it, as part of the transaction in progress, and a pending delivery of it to
    each. ``merchant`` is the receipt's, if the caller holds it (its endpoints are then
    known without a query: webhooks.listeners). Returns the event's id (evt_...), or None
    when no endpoint wants it.

    The event carries the receipt as getReceipt returns it to its merchant, as it is now,
    and ``extra`` beside it in ``data`` (a report's: ``{"report": {...}}``).
    """
    endpoint_ids = listening(merchant or receipt.merchant, event_type)
    if not endpoint_ids:
        return None
    now = timezone.now()
    public_id = _new_id()
    body = orjson.dumps(_body(public_id, event_type, now, receipt, merchant, extra)).decode()
    destinations = [str(pk) for pk in endpoint_ids]
    event = Event.objects.create(
        public_id=public_id,
        merchant_id=receipt.merchant_id,
        receipt=receipt,
        type=event_type,
        livemode=receipt.livemode,
        body=body,
        created_at=now,
    )
    for destination in destinations:  # usually one
        outbox.add(WEBHOOK, receipt.merchant_id, destination, payload_id=event.pk)
    return public_id


def connect_signals() -> None:
    """WebhooksConfig.ready: a failed delivery to a customer is an event, and so is each
    report to the tax authority accepted or failed for good; a delivery names its endpoint
    and event by id, so deleting either deletes it."""
    delivery_failed.connect(_delivery_failed, dispatch_uid="webhooks-delivery-failed")
    einvoicing_signals.reported.connect(_reported, dispatch_uid="webhooks-receipt-reported")
    einvoicing_signals.report_failed.connect(_report_failed, dispatch_uid="webhooks-receipt-report-failed")
    post_delete.connect(_endpoint_deleted, sender=Endpoint, dispatch_uid="webhooks-endpoint-deliveries")
    post_delete.connect(_event_deleted, sender=Event, dispatch_uid="webhooks-event-deliveries")


def _delivery_failed(sender, delivery, **kwargs) -> None:
    # None for a webhook that failed, which would only make another to the same failing endpoint.
    if delivery.receipt_id is not None and delivery.channel != WEBHOOK:
        emit(EventType.DELIVERY_FAILED, delivery.receipt)


def _reported(sender, receipt, report, **kwargs) -> None:
    emit(EventType.RECEIPT_REPORTED, receipt, extra={"report": report})


def _report_failed(sender, receipt, report, **kwargs) -> None:
    emit(EventType.RECEIPT_REPORT_FAILED, receipt, extra={"report": report})


def _endpoint_deleted(sender, instance, **kwargs) -> None:
    Delivery.objects.to_endpoint(instance).delete()


def _event_deleted(sender, instance, **kwargs) -> None:
    Delivery.objects.of_event(instance).delete()


def _new_id() -> str:
    return "evt_" + secrets.token_hex(12)


def _body(
    public_id: str,
    event_type: EventType,
    now: datetime,
    receipt: Receipt,
    merchant: Merchant | None,
    extra: dict | None = None,
) -> dict:
    return {
        "id": public_id,
        "type": str(event_type),
        "created": iso_utc(now),
        "livemode": receipt.livemode,
        "data": {"object": receipt_data(receipt, reveal_contact=True, merchant=merchant), **(extra or {})},
    }
