"""Appending receipts to the log, in batches, by one appender at a time.

Receipts are taken in the order they were written (their ids), then voids and receipts
set aside (ledger.entries) after their receipt, once committed: only rows
older than RECECO_LOG_COMMIT_LAG seconds, so that a sale whose transaction commits a little
after a later one is not passed over. Should one commit later still, the sweep finds it
among the last SWEEP_WINDOW receipts before the cursor and appends it then (its place in the
log is when it became visible); ``verifylog`` reports any receipt the log does not hold.

Only live receipts, and their voids and set asides, are appended: a test receipt is never
signed (anyone may make one, for any shop name; docs/security.md). Each entry is signed
with the current key in the current version of the content (receipts.signing; its leaf
keeps the version, and the merchant's identity as the operator had checked it), its leaf
and the complete subtrees it
finishes are stored (ledger.tree), and a signed checkpoint is published when the appender
has caught up, or at least every RECECO_LOG_CHECKPOINT_INTERVAL seconds while it has not.
A sale never waits for any of this: the appender runs apart from the requests.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from ledger import checkpoints, entries, tree
from ledger.models import CHECKED_COLUMNS, Checkpoint, Head, Leaf, Node
from receco.lib import signingkeys
from receipts.models import Receipt, SetAside, Void
from receipts.signing import ContentRow, Identity, sign

BATCH = 2000
SWEEP_WINDOW = 10_000
# A leaf's columns as the appender writes them (and appended_at, when the batch is appended).
LEAF_COLUMNS = (
    "index", "kind", "receipt_id", "void_id", "set_aside_id", "leaf_hash", "content_digest", "signature", "kid",
    "version", *CHECKED_COLUMNS,
)  # fmt: skip


class SigningOff(RuntimeError):
    """No signing key is configured: nothing can be appended."""


@dataclass(frozen=True)
class Appended:
    """What one call appended: how many entries, the log's size after, and the checkpoint
    it published (None when it published none)."""

    count: int
    size: int
    checkpoint: Checkpoint | None


def append_batch(
    limit: int = BATCH, *, now: datetime | None = None, checkpoint: bool | None = None, using: str = "default"
) -> Appended:
    """Append up to ``limit`` committed receipts and voids not yet in the log, in one
    transaction, and publish a checkpoint when due (always when ``checkpoint`` is True,
    never when False).

    Raises SigningOff when no signing key is configured.
    """
    keyring = signingkeys.keyring()
    if keyring is None:
        raise SigningOff(signingkeys.OFF_REASON)
    now = now or timezone.now()
    horizon = now - timedelta(seconds=settings.RECECO_LOG_COMMIT_LAG)
    with transaction.atomic(using=using):
        Head.objects.using(using).get_or_create(id=1)
        head = Head.objects.using(using).select_for_update().get(id=1)
        receipts = _receipts(head, horizon, limit, using)
        voids = _voids(head, horizon, limit - len(receipts), receipts, using)
        asides = _set_asides(head, horizon, limit - len(receipts) - len(voids), receipts, using)
        pending = _contents(receipts, voids, asides, keyring.kid, using)
        leaves, hashes = [], []
        for offset, (kind, receipt_id, void_id, set_aside_id, checked, content) in enumerate(pending):
            item = sign(content, keyring)
            hashes.append(item.leaf_hash)
            leaves.append(
                (head.size + offset, kind, receipt_id, void_id, set_aside_id,
                 hashes[-1], item.digest, item.signature, item.kid, content["v"], *checked)
            )  # fmt: skip
        if leaves:
            nodes, root = tree.extend(head.size, hashes, using)
            _insert(leaves, nodes, now, using)
            head.size += len(leaves)
            head.receipt_cursor = max([head.receipt_cursor, *(r.id for r in receipts)])
            head.void_cursor = max([head.void_cursor, *(v.id for v in voids)])
            head.set_aside_cursor = max([head.set_aside_cursor, *(a.id for a in asides)])
            head.save(using=using)
        else:
            root = None
        published = None
        if _checkpoint_due(head.size, len(leaves) < limit, checkpoint, now, using):
            published = checkpoints.publish(head.size, root or tree.root(head.size, using), keyring, using)
    return Appended(len(leaves), head.size, published)


def _contents(receipts: list[ContentRow], voids: list[Void], asides: list[SetAside], kid: str, using: str) -> list:
    """(kind, receipt id, void id, set aside id, the merchant's checked identity, content)
    of each entry to append, in order."""
    owners = [r.id for r in receipts] + [v.receipt_id for v in voids] + [a.receipt_id for a in asides]
    known = entries.set_asides_of(owners, using)
    # A refund's content signs its share of its sale's tax lines and card: its sales, in one query.
    sales = Receipt.objects.using(using).in_bulk({r.refund_of_id for r in receipts if r.refund_of_id})
    found = []
    for r in receipts:
        checked = Identity(r.checked_legal_name, r.checked_registration_number)
        content = entries.receipt_entry(
            r, r.merchant_string_id, kid, known.get(r.id, ()), checked=checked, sale=sales.get(r.refund_of_id)
        )
        found.append((Leaf.Kind.RECEIPT, r.id, None, None, checked, content))
    for v in voids:
        checked = Identity(*(getattr(v, name) for name in CHECKED_COLUMNS))
        content = entries.void_entry(
            v, v.receipt, v.merchant_string_id, kid, known.get(v.receipt_id, ()), checked=checked
        )
        found.append((Leaf.Kind.VOID, v.receipt_id, v.id, None, checked, content))
    for a in asides:
        checked = Identity(*(getattr(a, name) for name in CHECKED_COLUMNS))
        content = entries.set_aside_entry(a, a.receipt, a.merchant_string_id, kid, known[a.receipt_id], checked=checked)
        found.append((Leaf.Kind.SET_ASIDE, a.receipt_id, None, a.id, checked, content))
    return found


def _insert(leaves: list[tuple], nodes: list[tuple[int, bytes]], now: datetime, using: str) -> None:
    """Insert the batch's rows (``leaves``: LEAF_COLUMNS; ``nodes``: key and hash) with
    binary COPY on PostgreSQL, one ``executemany`` a table elsewhere: the ORM's bulk_create
    spends longer preparing thousands of rows than the database spends storing them, and
    ``executemany`` several times longer than COPY."""
    connection = connections[using]
    q = connection.ops.quote_name
    appended_at = connection.ops.adapt_datetimefield_value(now)
    tables = (
        (Leaf, (*LEAF_COLUMNS, "appended_at"), [(*leaf, appended_at) for leaf in leaves]),
        (Node, ("key", "hash"), nodes),
    )
    with connection.cursor() as cursor:
        for model, columns, rows in tables:
            names = ", ".join(q(column) for column in columns)
            table = q(model._meta.db_table)
            if connection.vendor != "postgresql":
                cursor.executemany(
                    f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(columns))})",  # noqa: S608 (names from the models)
                    rows,
                )
                continue
            fields = {field.column: field for field in model._meta.concrete_fields}
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:  # noqa: S608
                # A binary COPY is told each column's type, without its modifier (varchar(16): varchar).
                copy.set_types([fields[column].db_type(connection).split("(")[0] for column in columns])
                for row in rows:
                    copy.write_row(row)


def _receipts(head: Head, horizon: datetime, limit: int, using: str) -> list[ContentRow]:
    logged = Leaf.objects.using(using).filter(kind=Leaf.Kind.RECEIPT, receipt_id=OuterRef("id"))
    rows = (
        Receipt.objects.using(using)
        .annotate(merchant_string_id=F("merchant__string_id"), **_checked("merchant"))
        .filter(created_at__lte=horizon, livemode=True)
        .exclude(Exists(logged))  # the cursor is a shortcut; the log's own rows are the truth
        .order_by("id")
        .values_list(*ContentRow._fields)
    )
    found = list(rows.filter(id__gt=head.receipt_cursor)[:limit])
    if len(found) < limit and head.receipt_cursor:
        # Committed late, after the cursor passed them.
        late = rows.filter(id__gt=head.receipt_cursor - SWEEP_WINDOW, id__lte=head.receipt_cursor)
        found = [*late[: limit - len(found)], *found]
    return list(map(ContentRow._make, found))


def _voids(head: Head, horizon: datetime, limit: int, receipts: list[ContentRow], using: str) -> list[Void]:
    if limit <= 0:
        return []
    # A void follows its sale into the log: only voids of receipts logged by now.
    cursor = max([head.receipt_cursor, *(r.id for r in receipts)])
    rows = (
        Void.objects.using(using)
        .select_related("receipt")
        .annotate(merchant_string_id=F("receipt__merchant__string_id"), **_checked("receipt__merchant"))
        .filter(id__gt=head.void_cursor, created_at__lte=horizon, receipt__livemode=True)
        .exclude(Exists(Leaf.objects.using(using).filter(void_id=OuterRef("id"))))
        .order_by("id")[:limit]
    )
    found = []
    for void in rows:
        if void.receipt_id > cursor:
            break
        found.append(void)
    return found


def _set_asides(head: Head, horizon: datetime, limit: int, receipts: list[ContentRow], using: str) -> list[SetAside]:
    if limit <= 0:
        return []
    # A set aside follows its receipt into the log, as a void does.
    cursor = max([head.receipt_cursor, *(r.id for r in receipts)])
    rows = (
        SetAside.objects.using(using)
        .select_related("receipt")
        .annotate(merchant_string_id=F("receipt__merchant__string_id"), **_checked("receipt__merchant"))
        .filter(id__gt=head.set_aside_cursor, created_at__lte=horizon, receipt__livemode=True)
        .exclude(Exists(Leaf.objects.using(using).filter(set_aside_id=OuterRef("id"))))
        .order_by("id")[:limit]
    )
    found = []
    for set_aside in rows:
        if set_aside.receipt_id > cursor:
            break
        found.append(set_aside)
    return found


def _checked(merchant: str) -> dict:
    """The annotations that read the merchant's checked identity along the path ``merchant``."""
    return {name: F(f"{merchant}__{name}") for name in CHECKED_COLUMNS}


def _checkpoint_due(size: int, caught_up: bool, wanted: bool | None, now: datetime, using: str) -> bool:
    if wanted is not None:
        return wanted and size > 0 and not Checkpoint.objects.using(using).filter(size=size).exists()
    latest = Checkpoint.objects.using(using).order_by("-size").first()
    if size == 0 or (latest is not None and latest.size == size):
        return False
    interval = timedelta(seconds=settings.RECECO_LOG_CHECKPOINT_INTERVAL)
    return caught_up or latest is None or now - latest.created_at >= interval
