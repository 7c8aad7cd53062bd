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
from django.db import connections, router, transaction
from django.db.models.signals import post_delete
from django.utils import timezone

from einvoicing import signals as einvoicing_signals
from merchants.models import Merchant
from messaging import outbox
from messaging.signals import delivery_failed
from receco.lib.queries import create
from receipts import hooks
from receipts.models import Receipt
from receipts.numbering import DIGITS, digits_sql
from receipts.representation import iso_utc, receipt_data
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

    def statement(self, change: hooks.Change) -> hooks.Part | None:
        """A new sale's event and its deliveries, as CTEs ``e`` and ``d`` that read ``r``.

        The event's body is made before the receipt has its id and number, with 0 in their
        places, and the statement puts them there: every other field of the new receipt is
        known (its number's series too)."""
        connection = connections[router.db_for_write(Event)]
        if change.kind != hooks.CREATED or router.db_for_write(Receipt) != connection.alias:
            return None
        if not outbox.same_database(Event):
            return None
        merchant, receipt = change.merchant, change.receipt
        endpoint_ids = listening(merchant, EventType.RECEIPT_CREATED)
        now = timezone.now()
        public_id = _new_id()
        numbered = receipt.number_series is not None
        receipt.pk, receipt.number = 0, 0 if numbered else None
        body = orjson.dumps(_body(public_id, EventType.RECEIPT_CREATED, now, receipt, merchant))
        receipt.pk = receipt.number = None
        cut = body.index(_ID_PLACEHOLDER) + len(_ID_PLACEHOLDER) - 2  # before the 0
        pieces = [body[:cut], body[cut + 1 :]]
        if numbered:
            placeholder = b'"receipt_number":"' + f"{receipt.number_series}-{0:0{DIGITS}d}".encode() + b'"'
            at = pieces[1].index(placeholder) + len(placeholder) - DIGITS - 1  # before the zeros
            pieces[1:] = [pieces[1][:at], pieces[1][at + DIGITS :]]
        params = [public_id, merchant.pk, EventType.RECEIPT_CREATED, receipt.livemode]
        params += [*(piece.decode() for piece in pieces), now]
        params += outbox.pending_params(WEBHOOK, merchant.pk, [str(pk) for pk in endpoint_ids], now)
        return hooks.Part(_sale_sql(connection, numbered), params, public_id, outbox.wake)


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
    connection = connections[router.db_for_write(Event)]
    if connection.vendor == "postgresql" and outbox.same_database(Event):
        with transaction.mark_for_rollback_on_error(connection.alias), connection.cursor() as cursor:
            cursor.execute(
                _emit_sql(connection),
                [public_id, receipt.merchant_id, receipt.pk, event_type, receipt.livemode, body, now]
                + outbox.pending_params(WEBHOOK, receipt.merchant_id, destinations, now),
            )
        transaction.on_commit(outbox.wake, robust=True)
    else:  # the compiled insert of receco.lib.queries, and the outbox's own
        event = create(
            Event,
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


# Where the receipt's id goes in a body made with 0 in its place: the first key of
# data.object, after the body's own scalar fields (no string of JSON holds an unescaped quote).
_ID_PLACEHOLDER = b'"data":{"object":{"id":0,'
_SQL: dict[tuple, str] = {}


def _sale_sql(connection, numbered: bool) -> str:
    shape = ("sale", connection.alias, numbered)
    sql = _SQL.get(shape)
    if sql is None:
        body = f"%s || r.id::text || %s || {digits_sql('r.number')} || %s" if numbered else "%s || r.id::text || %s"
        event = f"SELECT %s, %s, r.id, %s, %s, {body}, %s FROM r"  # noqa: S608 (no value in it but parameters)
        sql = _SQL[shape] = _event_and_deliveries(connection, event)
    return sql


def _emit_sql(connection) -> str:
    sql = _SQL.get(("emit", connection.alias))
    if sql is None:
        values = "VALUES (%s, %s, %s, %s, %s, %s, %s)"
        sql = _SQL[("emit", connection.alias)] = f"WITH {_event_and_deliveries(connection, values)} SELECT 1"
    return sql


def _event_and_deliveries(connection, event_values: str) -> str:
    """Two CTEs: ``e`` inserts the event (its columns' values are ``event_values``), ``d``
    a pending delivery of it to each endpoint (messaging.outbox.pending_sql)."""
    qn = connection.ops.quote_name
    names = ("public_id", "merchant", "receipt", "type", "livemode", "body", "created_at")
    columns = ", ".join(qn(Event._meta.get_field(name).column) for name in names)
    # Names from the model, quoted by the backend; the values travel as parameters.
    event = f"e AS (INSERT INTO {qn(Event._meta.db_table)} ({columns}) {event_values} RETURNING id)"  # noqa: S608
    return f"{event}, {outbox.pending_sql(connection, 'e')}"
