"""Recording events: the outbox of webhooks.

``emit`` writes the event and one delivery per endpoint that wants it, pending, in the
transaction of the change it reports; once that commits it wakes the task runner's
dispatcher (webhooks.tasks.wake), which claims pending deliveries and sends them. No
task row is written per change. A crash in between loses nothing: the sweep
(``requeue_due``, the ``sendwebhooks`` command) finds the delivery still pending and
queues it. On PostgreSQL the event and its deliveries are one INSERT statement, and a
new receipt with them is one statement too (``create_with_event``): a sale with an
endpoint costs one round trip, like one without.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

import orjson
from django.db import connections, router, transaction
from django.utils import timezone

from merchants.models import Merchant
from receco.lib.queries import compiled_insert, create
from receipts.models import Receipt
from receipts.representation import iso_utc, receipt_data
from webhooks.listeners import listening
from webhooks.models import Delivery, Event, EventType
from webhooks.tasks import enqueue, wake

logger = logging.getLogger(__name__)

# A pending or sending delivery untouched for this long lost its task (a crash between
# commit and enqueue, a killed worker): the sweep queues it again.
STALE_AFTER = timedelta(minutes=5)


def emit(event_type: EventType, receipt: Receipt, merchant: Merchant | None = None) -> str | None:
    """Record a ``event_type`` event about ``receipt`` for each of its merchant's endpoints
    that wants it, as part of the transaction in progress (call it inside the change's
    ``transaction.atomic``). ``merchant`` is the receipt's, if the caller holds it (its
    endpoints are then known without a query: webhooks.listeners). Returns the event's
    id (evt_...), or None when no endpoint wants it.

    The event carries the receipt as getReceipt returns it to its merchant, as it is now.
    """
    endpoint_ids = listening(merchant or receipt.merchant, event_type)
    if not endpoint_ids:
        return None
    now = timezone.now()
    public_id = "evt_" + secrets.token_hex(12)
    body = orjson.dumps(_body(public_id, event_type, now, receipt)).decode()
    connection = connections[router.db_for_write(Event)]
    if connection.vendor == "postgresql":
        with transaction.mark_for_rollback_on_error(connection.alias), connection.cursor() as cursor:
            cursor.execute(
                _emit_sql(connection),
                [public_id, receipt.merchant_id, receipt.pk, event_type, receipt.livemode, body, now]
                + _delivery_params(endpoint_ids, now),
            )
    else:  # the compiled inserts of receco.lib.queries, one per row
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
        for endpoint_id in endpoint_ids:  # usually one
            create(Delivery, event=event, endpoint_id=endpoint_id)
    transaction.on_commit(wake, robust=True)
    return public_id


def create_with_event(merchant: Merchant, endpoint_ids: list[int], **values) -> Receipt:
    """``Receipt.objects.create(merchant=merchant, **values)`` with its receipt.created
    event and a delivery to each of ``endpoint_ids``, in ONE PostgreSQL statement (a
    statement is atomic by itself: no BEGIN and COMMIT), then the dispatcher woken. Call
    it outside a transaction. Raises IntegrityError as the receipt's INSERT would, having
    written nothing.

    The event's body is made before the receipt has its id, with 0 in its place, and the
    statement puts the id there: every other field of the new receipt is known already.
    """
    insert = compiled_insert(Receipt)
    receipt, params = insert.prepare(merchant=merchant, **values)
    now = timezone.now()
    public_id = "evt_" + secrets.token_hex(12)
    receipt.pk = 0
    body = orjson.dumps(_body(public_id, EventType.RECEIPT_CREATED, now, receipt))
    receipt.pk = None
    cut = body.index(_ID_PLACEHOLDER) + len(_ID_PLACEHOLDER) - 2  # before the 0
    connection = connections[insert.db]
    sql = _SQL.get(("create", connection.alias))
    if sql is None:
        returning = ", ".join(f"r.{connection.ops.quote_name(field.column)}" for field in insert.returning)
        event = "SELECT %s, %s, r.id, %s, %s, %s || r.id::text || %s, %s FROM r"
        sql = _SQL[("create", connection.alias)] = (
            f"WITH r AS ({insert.sql}), {_event_and_deliveries(connection, event)} SELECT {returning} FROM r"  # noqa: S608
        )
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            params
            + [public_id, merchant.pk, EventType.RECEIPT_CREATED, receipt.livemode]
            + [body[:cut].decode(), body[cut + 1 :].decode(), now]
            + _delivery_params(endpoint_ids, now),
        )
        row = cursor.fetchone()
    transaction.on_commit(wake, robust=True)  # outside a transaction: now
    return insert.saved(receipt, row)


def _body(public_id: str, event_type: EventType, now: datetime, receipt: Receipt) -> dict:
    return {
        "id": public_id,
        "type": str(event_type),
        "created": iso_utc(now),
        "livemode": receipt.livemode,
        "data": {"object": receipt_data(receipt, reveal_contact=True)},
    }


# Where the receipt's id goes in a body made with 0 in its place: the first key of
# data.object, after the body's own scalar fields (no string of JSON holds an unescaped quote).
_ID_PLACEHOLDER = b'"data":{"object":{"id":0,'
_SQL: dict[tuple[str, str], str] = {}


def one_statement(insert) -> bool:
    """Whether ``create_with_event`` can store a receipt through ``insert`` (a CompiledInsert of Receipt)."""
    return insert.plain and connections[insert.db].vendor == "postgresql" and router.db_for_write(Event) == insert.db


def _emit_sql(connection) -> str:
    sql = _SQL.get(("emit", connection.alias))
    if sql is None:
        values = "VALUES (%s, %s, %s, %s, %s, %s, %s)"
        sql = _SQL[("emit", connection.alias)] = f"WITH {_event_and_deliveries(connection, values)} SELECT 1"
    return sql


def _event_and_deliveries(connection, event_values: str) -> str:
    """Two CTEs: ``e`` inserts the event (its columns' values are ``event_values``), ``d``
    a pending delivery of it to each endpoint of an array parameter (_delivery_params)."""
    qn = connection.ops.quote_name

    def columns(model, names):
        return ", ".join(qn(model._meta.get_field(name).column) for name in names)

    event_columns = columns(Event, ("public_id", "merchant", "receipt", "type", "livemode", "body", "created_at"))
    delivery_columns = columns(Delivery, ("event", "endpoint", "status", "attempts", "created_at", "updated_at"))
    return (
        # Names from the models, quoted by the backend; the values travel as parameters.
        f"e AS (INSERT INTO {qn(Event._meta.db_table)} ({event_columns}) {event_values} RETURNING id),"  # noqa: S608
        f" d AS (INSERT INTO {qn(Delivery._meta.db_table)} ({delivery_columns})"
        " SELECT e.id, endpoint_id, %s, 0, %s, %s FROM e, unnest(%s::integer[]) AS endpoint_id)"
    )


def _delivery_params(endpoint_ids: list[int], now: datetime) -> list:
    return [Delivery.Status.PENDING, now, now, list(endpoint_ids)]


def resend(delivery: Delivery) -> Delivery:
    """Send ``delivery``'s event to its endpoint once more, as a new delivery; return it."""
    with transaction.atomic():
        again = Delivery.objects.create(event_id=delivery.event_id, endpoint_id=delivery.endpoint_id)
        transaction.on_commit(wake, robust=True)
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
