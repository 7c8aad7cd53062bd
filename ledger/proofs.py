"""What the log proves on request, for its plain views (agentapi.log.views) and the API's
procedures alike (getReceiptProof, getLogCheckpoint, getLogConsistency): a receipt's
bundle against a checkpoint, the latest checkpoint, a consistency proof. The rules for
which checkpoint and which sizes live here; each caller words its errors its own way.
"""

import base64

from django.conf import settings

from ledger import bundles, checkpoints, tree
from ledger.models import Checkpoint
from receipts.models import Receipt
from receipts.rendering.representation import iso_utc

NO_CHECKPOINT_OF_SIZE = "tree_size: the log published no checkpoint of this size"
# The largest tree size there can be (a BigIntegerField): larger ones are refused, not looked up.
MAX_SIZE = 2**63 - 1


class NoCheckpoint(LookupError):
    """The log has published no checkpoint yet (``size`` None), or none of ``size``;
    ``message`` says which."""

    def __init__(self, size: int | None = None, message: str = "The log has published no checkpoint yet"):
        super().__init__(message)
        self.size = size
        self.message = message


class BadSizes(ValueError):
    """Sizes a consistency proof cannot be had between; the message says why."""


def wait_seconds() -> int:
    """How long, at most, a receipt usually waits for its proof (docs/verification.md):
    the commit lag and the checkpoint interval."""
    return settings.RECECO_LOG_COMMIT_LAG + settings.RECECO_LOG_CHECKPOINT_INTERVAL


def checkpoint(size: int | None = None) -> Checkpoint:
    """The checkpoint of ``size`` entries, or the latest (as this process read it less than
    a second ago). Raises NoCheckpoint."""
    found = checkpoints.latest_cached() if size is None else Checkpoint.objects.filter(size=size).first()
    if found is None:
        raise NoCheckpoint() if size is None else NoCheckpoint(size, NO_CHECKPOINT_OF_SIZE)
    return found


def receipt_proof(receipt: Receipt, entry: str = "receipt", size: int | None = None) -> dict:
    """The proof bundle of ``receipt``'s ``entry`` (bundles.ENTRIES) against the checkpoint
    of ``size`` entries, or the latest. Raises NoCheckpoint, bundles.NotLogged with the
    checkpoint's size as its argument, or bundles.NeverLogged (a test receipt's)."""
    against = checkpoint(size)
    try:
        return bundles.bundle(receipt, against, entry=entry)
    except bundles.NotLogged:
        raise bundles.NotLogged(against.size) from None


def checkpoint_data(found: Checkpoint) -> dict:
    """A checkpoint as the API answers it: its size, root, signed note and time."""
    return {
        "tree_size": found.size,
        "root": base64.b64encode(bytes(found.root)).decode(),
        "checkpoint": found.note,
        "published_at": iso_utc(found.created_at),
    }


def consistency(old: int, new: int | None = None) -> dict:
    """The consistency proof from the tree of ``old`` entries to that of ``new`` (the latest
    checkpoint's size by default), both at most the latest checkpoint's.

    Raises NoCheckpoint when there is none yet or ``new`` is beyond it, BadSizes unless
    0 < old <= new.
    """
    latest = checkpoints.latest()
    if latest is None:
        raise NoCheckpoint()
    new = latest.size if new is None else new
    if not 0 < old <= new:
        raise BadSizes("from and to: whole numbers with 0 < from <= to")
    if new > latest.size:
        raise NoCheckpoint(new, f"The latest checkpoint is of {latest.size} entries, not {new}")
    hashes = tree.consistency_proof(old, new)
    return {"from": old, "to": new, "proof": [base64.b64encode(h).decode() for h in hashes]}
