"""A receipt's proof bundle, what ``receco-verify`` and the verify page check: its signed
content (rebuilt from its row now), the signature the log stored, its inclusion proof and
the signed checkpoint that proof leads to (receco_verify.receipt describes the format)."""

import base64

from django.db import connections

from ledger import entries, tree
from ledger.models import CHECKED_COLUMNS, Checkpoint, Leaf
from receipts.models import Receipt, Void

# What ``bundle`` proves of a receipt: its own entry, its void's, its latest set aside's.
ENTRIES = tuple(kind.value for kind in (Leaf.Kind.RECEIPT, Leaf.Kind.VOID, Leaf.Kind.SET_ASIDE))


class NotLogged(LookupError):
    """The entry is not in the log yet, or not in the tree the checkpoint asked for covers."""


class NeverLogged(LookupError):
    """The receipt is a test receipt the log does not hold: test receipts are never signed."""


TEST_RECEIPT_NOT_LOGGED = "A test receipt is never signed nor logged: it records no purchase"


def bundle(
    receipt: Receipt, checkpoint: Checkpoint, *, void: bool = False, entry: str | None = None, using: str = "default"
) -> dict:
    """The proof bundle of ``receipt``'s ``entry`` (ENTRIES: its own, its void's, or its
    latest set aside's; ``void``: its void's) against ``checkpoint``.

    Raises NotLogged when that entry is not in the tree ``checkpoint`` signs, NeverLogged
    when it never will be (a test receipt's).
    """
    leaf = _leaf(receipt.pk, entry or (Leaf.Kind.VOID if void else Leaf.Kind.RECEIPT), using)
    if leaf is None and receipt.is_test:
        raise NeverLogged(TEST_RECEIPT_NOT_LOGGED)
    if leaf is None or leaf.index >= checkpoint.size:
        raise NotLogged
    voided = Void.objects.using(using).filter(id=leaf.void_id).first() if leaf.void_id else None
    asides = entries.set_asides_of([receipt.pk], using).get(receipt.pk, [])
    try:
        content = entries.content(leaf, receipt, receipt.merchant.string_id, asides, voided)
    except LookupError:
        raise NotLogged from None  # its row is gone: verifylog reports it
    return {
        "content": content,
        "signature": _b64(leaf.signature),
        "leaf_index": leaf.index,
        "tree_size": checkpoint.size,
        "inclusion": [_b64(value) for value in tree.inclusion_proof(leaf.index, checkpoint.size, using)],
        "checkpoint": checkpoint.note,
    }


def _leaf(receipt_id: int, kind: str, using: str) -> Leaf | None:
    # Plain SQL, as ledger.tree's look-up: the ORM's query building would cost more than it.
    # A receipt has one entry of its own and at most one void; of its set asides, the latest.
    connection = connections[using]
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        columns = ("index", "void_id", "set_aside_id", "signature", "kid", "version", *CHECKED_COLUMNS)
        cursor.execute(
            f"SELECT {', '.join(map(q, columns))} FROM {q(Leaf._meta.db_table)} "  # noqa: S608
            f"WHERE {q('receipt_id')} = %s AND {q('kind')} = %s ORDER BY {q('index')} DESC",
            [receipt_id, kind],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    index, void_id, set_aside_id, signature, kid, version, legal_name, registration_number = row
    return Leaf(
        index=index,
        kind=kind,
        receipt_id=receipt_id,
        void_id=void_id,
        set_aside_id=set_aside_id,
        signature=bytes(signature),
        kid=kid,
        version=version,
        checked_legal_name=legal_name,
        checked_registration_number=registration_number,
    )


def _b64(value: bytes) -> str:
    return base64.b64encode(bytes(value)).decode()


def signed(receipt: Receipt, using: str = "default") -> tuple[dict, bytes] | None:
    """The content of ``receipt``'s own entry, as its row states it now, and the signature
    the log stored; None before it is appended (or once its row is gone)."""
    leaf = _leaf(receipt.pk, Leaf.Kind.RECEIPT, using)
    if leaf is None:
        return None
    asides = entries.set_asides_of([receipt.pk], using).get(receipt.pk, [])
    try:
        return entries.content(leaf, receipt, receipt.merchant.string_id, asides), bytes(leaf.signature)
    except LookupError:
        return None
