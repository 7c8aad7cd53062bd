"""A receipt's proof bundle, what ``receco-verify`` and the verify page check: its signed
content (rebuilt from its row now), the signature the log stored, its inclusion proof and
the signed checkpoint that proof leads to (receco_verify.receipt describes the format)."""

import base64

from ledger import tree
from ledger.models import Checkpoint, Leaf
from receipts.models import Receipt
from receipts.signing import receipt_content, void_content


class NotLogged(LookupError):
    """The entry is not in the log yet, or not in the tree the checkpoint asked for covers."""


def entry_content(leaf: Leaf, receipt: Receipt) -> dict:
    """The content of ``leaf`` as the receipt's row states it now."""
    merchant_id = receipt.merchant.string_id
    if leaf.kind == Leaf.Kind.VOID:
        return void_content(leaf.void, receipt, merchant_id, leaf.kid)
    return receipt_content(receipt, merchant_id, leaf.kid)


def bundle(receipt: Receipt, checkpoint: Checkpoint, *, void: bool = False) -> dict:
    """The proof bundle of ``receipt`` (its void's, when ``void``) against ``checkpoint``.

    Raises NotLogged when that entry is not in the tree ``checkpoint`` signs.
    """
    kind = Leaf.Kind.VOID if void else Leaf.Kind.RECEIPT
    leaf = Leaf.objects.filter(receipt=receipt, kind=kind).select_related("void").first()
    if leaf is None or leaf.index >= checkpoint.size:
        raise NotLogged(kind)
    return {
        "content": entry_content(leaf, receipt),
        "signature": _b64(leaf.signature),
        "leaf_index": leaf.index,
        "tree_size": checkpoint.size,
        "inclusion": [_b64(value) for value in tree.inclusion_proof(leaf.index, checkpoint.size)],
        "checkpoint": checkpoint.note,
    }


def _b64(value: bytes) -> str:
    return base64.b64encode(bytes(value)).decode()
