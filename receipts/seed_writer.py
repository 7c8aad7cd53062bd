"""The writer of made-up receipts (receipts.seeding): demo and benchmark data that the
``seedreceipts`` command stores, beside the one writer of sales (receipts.writer).

Seeded receipts are ordinary rows, stored with no hook (no event, no delivery), so they
are written here, not through receipts.writer: ``insert_seeded`` stores receipts made in
Python, ``insert_generated`` has PostgreSQL make and store millions in one statement.
"""

from __future__ import annotations

import dataclasses
import time

from django.db import connections, router, transaction

from merchants.models import Merchant
from receipts import seeding
from receipts.models import Receipt
from receipts.writer import MAX_CODE_ATTEMPTS


def insert_seeded(receipts: list[Receipt]) -> None:
    """Store made-up receipts, numbered and dated by the caller, in one transaction, with no
    hooks (no events, no deliveries): demo and benchmark data (the ``seedreceipts`` command
    where the database cannot make them itself: ``insert_generated``)."""
    with transaction.atomic():
        stored = [receipt.created_at for receipt in receipts]
        Receipt.objects.bulk_create(receipts, batch_size=len(receipts))
        # auto_now(_add) gave them this moment: they were stored when the caller says.
        for receipt, when in zip(receipts, stored, strict=True):
            receipt.created_at = receipt.updated_at = when
        Receipt.objects.bulk_update(receipts, ["created_at", "updated_at"], batch_size=1000)


def insert_generated(merchants: list[tuple[Merchant, int]], start, end, rng) -> dict[str, float]:
    """Store made-up receipts made by PostgreSQL itself (receipts.seeding): ``count`` for
    each (merchant, count) of ``merchants``, stored between ``start`` and ``end``, numbered
    after what their series held (the series' rows updated to agree), with no hooks, in one
    transaction; return how long each phase took, in seconds.

    Into an empty table, a second connection makes the rows and streams them (COPY TO, in
    binary) into this one's COPY FROM: the two work at once, and COPY stores rows in
    batches, frozen when the tables naming receipts are empty too (``_truncated_if_empty``).
    Into a table that holds receipts, they are made here first, and a token or short code
    already stored is drawn again before anything is inserted.
    """
    segments = seeding.segments(merchants, start, end)
    total = sum(segment.count for segment in segments)
    generator = seeding.Generator.new(total, rng)
    connection = connections[router.db_for_write(Receipt)]
    quote = connection.ops.quote_name
    table = quote(Receipt._meta.db_table)
    fields = [field for field in Receipt._meta.local_concrete_fields if field.column != "id"]
    names = ", ".join(quote(field.column) for field in fields)
    fingerprint = "encode(sha256(convert_to(fp_head || token || fp_tail, 'UTF8')), 'hex')"
    # Each column in its own type: a binary COPY converts nothing.
    values = ", ".join(
        f"({fingerprint if field.column == 'fingerprint' else quote(field.column)})::{field.db_type(connection)}"
        for field in fields
    )
    phases, began = {}, time.monotonic()

    def phase(name: str) -> None:
        nonlocal began
        phases[name] = time.monotonic() - began
        began = time.monotonic()

    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        segments = _numbered_segments(cursor, segments)
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (names from the model)
        held = cursor.fetchone()[0]
        if held:
            _seed_tables(cursor.cursor, segments, rng)
            cursor.execute(f"CREATE TEMPORARY TABLE seed_rows ON COMMIT DROP AS {generator.rows_sql()}")
            _redraw_taken(cursor, table, generator)
            phase("made")
        rebuilt = _dropped_indexes(cursor, table) if total >= max(REBUILD_AT, held) else []
        phase("indexes dropped")
        if held:
            cursor.execute(f"INSERT INTO {table} ({names}) SELECT {values} FROM seed_rows")  # noqa: S608
        else:
            maker = connection.get_new_connection(connection.get_connection_params())
            try:
                maker.cursor_factory = getattr(maker.cursor_factory, "without_deadline", maker.cursor_factory)
                maker.execute("SET statement_timeout = 0")
                _seed_tables(maker.cursor(), segments, rng)
                # OFFSET 0 keeps the rows' query whole: pulled up, its token would be made twice
                # (for its column and for the fingerprint).
                rows = f"{generator.rows_sql()} OFFSET 0"
                made = f"COPY (SELECT {values} FROM ({rows}) AS seed_rows) TO STDOUT (FORMAT binary)"  # noqa: S608
                frozen = ", FREEZE" if _truncated_if_empty(cursor, table) else ""
                stored = f"COPY {table} ({names}) FROM STDIN (FORMAT binary{frozen})"
                with maker.cursor().copy(made) as source, cursor.cursor.copy(stored) as sink:
                    for data in source:
                        sink.write(data)
            finally:
                maker.close()
        phase("made and inserted")
        if rebuilt:
            # Each index sorts the table once, with the memory and parallel workers it may have.
            cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
        for statement in rebuilt:
            cursor.execute(statement)
            phase(statement.split(" ON ")[0].split(" ADD CONSTRAINT ")[-1])
        cursor.execute(f"ANALYZE {table}")
        phase("analyzed")
    phase("committed")
    return phases


def _seed_tables(cursor, segments: list, rng) -> None:
    """Fill the temporary tables the receipts are made from (receipts.seeding), with
    ``cursor``, a psycopg cursor of the connection that makes them."""
    for statement in (seeding.SEGMENT_TABLE, seeding.BASKET_TABLE, seeding.DIGITS_TABLE):
        cursor.execute(statement)
    cursor.execute("INSERT INTO seed_digits VALUES (%s, %s)", seeding.digit_tables())
    with cursor.copy("COPY seed_segment FROM STDIN") as copy:
        for segment in segments:
            copy.write_row(seeding.segment_rows(segment))
    with cursor.copy("COPY seed_basket FROM STDIN") as copy:
        for row in seeding.basket_rows(rng):
            copy.write_row(row)


def _truncated_if_empty(cursor, table: str) -> bool:
    """TRUNCATE ``table`` and the tables whose foreign keys name it (and theirs) when all
    are empty, so that rows copied into it in this transaction may be stored frozen
    (``COPY … FREEZE``: marked visible to all and frozen as written, where vacuum would
    otherwise rewrite every page of a bulk load later to set its hint bits and freeze it);
    say whether it did. Holds the tables locked until the transaction ends."""
    cursor.execute(
        "WITH RECURSIVE named (id) AS (SELECT %s::regclass::oid UNION SELECT c.conrelid FROM pg_constraint c"
        " JOIN named n ON c.confrelid = n.id AND c.contype = 'f') SELECT id::regclass::text FROM named",
        [table],
    )
    tables = [name for (name,) in cursor.fetchall()]
    # Locked before they are looked at: a sale committed in between would be truncated.
    cursor.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")
    for name in tables:
        cursor.execute(f"SELECT EXISTS (SELECT FROM {name})")  # noqa: S608 (names from the catalogue)
        if cursor.fetchone()[0]:
            return False
    cursor.execute(f"TRUNCATE {', '.join(tables)}")
    return True


# Seeding at least this many receipts, and at least as many as the table holds, drops the
# table's indexes and constraints (but its primary key) and builds them again after: one
# sort each instead of ten million insertions into each (docs/scaling.md).
REBUILD_AT = 500_000


def _dropped_indexes(cursor, table: str) -> list[str]:
    """Drop the indexes and the unique and foreign-key constraints of ``table`` but its
    primary key; return the statements that make them again, exactly as they were (their
    names and definitions as PostgreSQL prints them)."""
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = %s::regclass AND contype IN ('u', 'f') ORDER BY contype DESC, conname",
        [table],
    )
    constraints = cursor.fetchall()
    cursor.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE i.indrelid = %s::regclass"
        " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)"
        " ORDER BY c.relname",
        [table],
    )
    indexes = cursor.fetchall()
    for name, _ in constraints:
        cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for name, _ in indexes:
        cursor.execute(f'DROP INDEX "{name}"')
    # Unique constraints (and their indexes) first: the foreign keys are checked after.
    made = [f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}' for name, definition in constraints]
    return [*(definition for _, definition in indexes), *made]


def _numbered_segments(cursor, segments: list) -> list:
    """``segments`` numbered after what their series held, the series' rows taking their
    last numbers (one upsert, which locks them until the receipts are stored)."""
    if not segments:
        return segments
    cursor.execute(
        "INSERT INTO receipts_receiptseries (merchant_id, name, last) VALUES "  # noqa: S608 (placeholders only)
        + ", ".join(["(%s, %s, %s)"] * len(segments))
        + " ON CONFLICT (merchant_id, name) DO UPDATE SET last = receipts_receiptseries.last + EXCLUDED.last"
        " RETURNING merchant_id, name, last",
        [value for segment in segments for value in (segment.merchant.pk, segment.series, segment.count)],
    )
    lasts = {(merchant_id, name): last for merchant_id, name, last in cursor.fetchall()}
    return [
        dataclasses.replace(segment, first_number=lasts[segment.merchant.pk, segment.series] - segment.count + 1)
        for segment in segments
    ]


def _redraw_taken(cursor, table: str, generator) -> None:
    """Give the rows of seed_rows whose token or short code is already stored fresh ones,
    from counters past the run's (so unique among its own too)."""
    for attempt in range(1, MAX_CODE_ATTEMPTS + 1):
        counter = f"s.c + {generator.total * attempt}"
        cursor.execute(
            f"UPDATE seed_rows s SET short_code = {generator.short_code(counter)}"  # noqa: S608 (no value in it)
            f" WHERE EXISTS (SELECT 1 FROM {table} r WHERE r.short_code = s.short_code)"
        )
        redrawn = cursor.rowcount
        cursor.execute(
            f"UPDATE seed_rows s SET token = 'rcpt_' || split_part(s.token, '_', 2) || '_' || "  # noqa: S608
            f"{generator.token_random(counter)} WHERE EXISTS (SELECT 1 FROM {table} r WHERE r.token = s.token)"
        )
        if not redrawn and not cursor.rowcount:
            return
    raise RuntimeError(f"no free short code after {MAX_CODE_ATTEMPTS} attempts")
