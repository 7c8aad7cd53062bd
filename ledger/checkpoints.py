"""The log's signed checkpoints: C2SP tlog-checkpoint bodies as signed notes, named by the
log's origin (RECECO_LOG_ORIGIN) and signed with the current key."""

import time

from django.conf import settings
from receco_verify import note

from ledger.models import Checkpoint
from receco.lib.signingkeys import Keyring


def publish(size: int, root: bytes, keyring: Keyring, using: str = "default") -> Checkpoint:
    """Sign and store the checkpoint of the tree of ``size`` leaves and root ``root``."""
    origin = settings.RECECO_LOG_ORIGIN
    text = note.Checkpoint(origin, size, root).text()
    signed = note.sign(text, origin, keyring.sign, keyring.current_public)
    checkpoint = Checkpoint.objects.using(using).create(size=size, root=root, note=signed, kid=keyring.kid)
    forget_cached()
    return checkpoint


def latest(using: str = "default") -> Checkpoint | None:
    """The newest checkpoint, or None before the first."""
    return Checkpoint.objects.using(using).order_by("-size").first()


_cached: tuple[float, Checkpoint | None] = (0.0, None)
CACHE_SECONDS = 1.0


def latest_cached() -> Checkpoint | None:
    """The newest checkpoint as this process read it less than CACHE_SECONDS ago: proofs
    are served against it, and a checkpoint is published at most about once a second."""
    global _cached
    now = time.monotonic()
    read_at, found = _cached
    if found is None or now - read_at >= CACHE_SECONDS:
        found = latest()
        _cached = (now, found)
    return found


def forget_cached() -> None:
    """Drop the cached checkpoint (tests, and the appender in this process)."""
    global _cached
    _cached = (0.0, None)
