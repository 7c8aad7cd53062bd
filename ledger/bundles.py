"""A receipt's proof bundle, what ``receco-verify`` and the verify page check: its signed
content (rebuilt from its row now), the signature the log stored, its inclusion proof and
the signed checkpoint that proof leads to (receco_verify.receipt describes the format)."""

import base64

from django.db import connections

from ledger import tree
from ledger.models import Checkpoint, Leaf
from receipts.models import Receipt, Void
from receipts.signing import receipt_content, void_content


class NotLogged(LookupError):
    """The entry is not in the log yet, or not in the tree the checkpoint asked for covers."""


def entry_content(leaf: Leaf, receipt: Receipt) -> dict:
    """The content of ``leaf`` as the receipt's row states it now."""
    merchant_id = receipt.merchant.string_id
    if leaf.kind == Leaf.Kind.VOID:
        return void_content(leaf.void, receipt, merchant_id, leaf.kid)
    return receipt_content(receipt, merchant_id, leaf.kid)


def bundle(receipt: Receipt, checkpoint: Checkpoint, *, void: bool = False, using: str = "default") -> dict:
    """The proof bundle of ``receipt`` (its void's, when ``void``) against ``checkpoint``.

    Raises NotLogged when that entry is not in the tree ``checkpoint`` signs.
    """
    leaf = _leaf(receipt.pk, Leaf.Kind.VOID if void else Leaf.Kind.RECEIPT, using)
    if leaf is None or leaf.index >= checkpoint.size:
        raise NotLogged
    if leaf.void_id:
        leaf.void = Void.objects.using(using).get(id=leaf.void_id)  # voids are few: the ORM will do
    return {
        "content": entry_content(leaf, receipt),
        "signature": b64(leaf.signature),
        "leaf_index": leaf.index,
        "tree_size": checkpoint.size,
        "inclusion": [b64(value) for value in tree.inclusion_proof(leaf.index, checkpoint.size, using)],
        "checkpoint": checkpoint.note,
    }


def receipt_leaf(receipt_id: int, using: str = "default") -> Leaf | None:
    """The log's entry of the receipt ``receipt_id`` (not of its void), or None before it is appended."""
    return _leaf(receipt_id, Leaf.Kind.RECEIPT, using)


def _leaf(receipt_id: int, kind: str, using: str) -> Leaf | None:
    # Plain SQL, as ledger.tree's look-up: the ORM's query building would cost more than it.
    connection = connections[using]
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {q('index')}, {q('void_id')}, {q('signature')}, {q('kid')} FROM {q(Leaf._meta.db_table)} "  # noqa: S608
            f"WHERE {q('receipt_id')} = %s AND {q('kind')} = %s",
            [receipt_id, kind],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    index, void_id, signature, kid = row
    return Leaf(index=index, kind=kind, receipt_id=receipt_id, void_id=void_id, signature=bytes(signature), kid=kid)


def b64(value: bytes) -> str:
    """``value`` in base64 (standard alphabet, padded), as bundles write hashes and signatures."""
    return base64.b64encode(bytes(value)).decode()
