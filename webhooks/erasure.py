"""Erasing customers' contacts from the webhook events kept (privacy.erasure,
privacy.retention).

An event's body is the receipt as it was when the event was made, its customer's email and
phone number unmasked for the merchant (webhooks.events). Erasing a contact rewrites every
stored body that holds it with that field null; a delivery of it not yet made then sends
the body without it (each attempt signs the body as stored). A receipt removed by retention
takes its events with it.

Bodies are searched in ranges of SCAN ids, so that no statement reads the whole table
(DATABASE_STATEMENT_TIMEOUT) however many events there are, and those of a range
rewritten UPDATE_BATCH to a statement, in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import orjson
from django.db import connections, transaction
from django.db.models import Max, Q, QuerySet

from receipts.contacts import CONTACT_FIELDS, EMAIL_FIELD
from webhooks.models import Attempt, Delivery, Event

SCAN = 20_000
# Bodies rewritten by one statement.
UPDATE_BATCH = 500


def _in_ranges(events: QuerySet) -> Iterator[QuerySet]:
    """``events`` cut into consecutive ranges of SCAN ids."""
    last = Event.objects.aggregate(last=Max("pk"))["last"] or 0
    for start in range(0, last, SCAN):
        yield events.filter(pk__gt=start, pk__lte=start + SCAN)


def _rewrite(events: QuerySet, erase: Callable[[str, str], bool], *, in_ranges: bool = True) -> int:
    """Null each contact field of each of ``events``' bodies for which ``erase(field,
    value)`` says so, reading them in ranges of ids unless ``in_ranges`` is False (an
    indexed query); return how many bodies changed."""
    changed = 0
    for batch in _in_ranges(events) if in_ranges else [events]:
        rewritten = []
        for pk, body in batch.values_list("pk", "body"):
            data = orjson.loads(body)
            receipt = (data.get("data") or {}).get("object") or {}
            fields = [field for field in CONTACT_FIELDS if receipt.get(field) and erase(field, receipt[field])]
            if not fields:
                continue
            for field in fields:
                receipt[field] = None
            rewritten.append(Event(pk=pk, body=orjson.dumps(data).decode()))
        # A few statements and one commit per range, not one of each per body: a first
        # retention run rewrites every body older than the contacts' retention.
        with transaction.atomic():
            Event.objects.bulk_update(rewritten, ["body"], batch_size=UPDATE_BATCH)
        changed += len(rewritten)
    return changed


def erase_contact(field: str, contact: str) -> int:
    """Remove ``contact`` (the value of the receipts' ``field``) from every event body that
    holds it there; return how many bodies changed."""
    quoted = orjson.dumps(contact).decode()
    if field == EMAIL_FIELD:
        events = Event.objects.filter(body__icontains=quoted)
        return _rewrite(events, lambda name, value: name == field and value.lower() == contact.lower())
    events = Event.objects.filter(body__contains=quoted)
    return _rewrite(events, lambda name, value: name == field and value == contact)


def detach(receipt_id: int, field: str, contact: str) -> int:
    """Remove ``contact`` from ``field`` in the bodies of the events of one receipt; return how many changed."""
    events = Event.objects.filter(receipt_id=receipt_id)  # its index: one look-up
    return _rewrite(events, lambda name, value: name == field and value.lower() == contact.lower(), in_ranges=False)


def made_before(moment: datetime) -> int:
    """Remove every contact from the bodies of the events made before ``moment``
    (retention); return how many bodies changed."""
    holding = Q(body__contains='"customer_email":"') | Q(body__contains='"customer_phone":"')
    return _rewrite(Event.objects.filter(holding, created_at__lt=moment), lambda name, value: True)


def delete_of_receipts(receipt_ids: list[int]) -> int:
    """Delete the events of the receipts ``receipt_ids`` (removed by retention), and with
    them their deliveries and attempts, in one transaction; return how many events."""
    events = Event.objects.filter(receipt_id__in=receipt_ids)
    with transaction.atomic():
        # The deliveries of all the events at once, then the events without the post_delete
        # that would delete each one's (webhooks.events): that looks them up one event at a
        # time by their payload, which no index serves (the outbox's hot path writes none),
        # a scan of the whole outbox per event: over an hour for 31,000 events among 260,000 deliveries.
        deliveries = Delivery.objects.filter(payload_id__in=events.values("pk"))
        Attempt.objects.filter(delivery__in=deliveries.values("pk")).delete()
        _delete_sending_no_signal(deliveries)
        return _delete_sending_no_signal(events)


def _delete_sending_no_signal(rows: QuerySet) -> int:
    """Delete ``rows`` in one statement, sending no signal (QuerySet.delete() sends them
    row by row, and Django has no public delete that does not); return how many."""
    connection = connections[rows.db]
    name = connection.ops.quote_name
    meta = rows.model._meta
    chosen, params = rows.values("pk").query.get_compiler(connection=connection).as_sql()
    # (names from the model; the values are the compiled query's parameters)
    statement = f"DELETE FROM {name(meta.db_table)} WHERE {name(meta.pk.column)} IN ({chosen})"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.rowcount
