"""The log's signed checkpoints: C2SP tlog-checkpoint bodies as signed notes, named by the
log's origin (RECECO_LOG_ORIGIN) and signed with the current key."""

from django.conf import settings
from receco_verify import note

from ledger.models import Checkpoint
from receco.lib.signingkeys import Keyring


def publish(size: int, root: bytes, keyring: Keyring, using: str = "default") -> Checkpoint:
    """Sign and store the checkpoint of the tree of ``size`` leaves and root ``root``."""
    origin = settings.RECECO_LOG_ORIGIN
    text = note.Checkpoint(origin, size, root).text()
    signed = note.sign(text, origin, keyring.sign, keyring.current_public)
    return Checkpoint.objects.using(using).create(size=size, root=root, note=signed, kid=keyring.kid)


def latest(using: str = "default") -> Checkpoint | None:
    """The newest checkpoint, or None before the first."""
    return Checkpoint.objects.using(using).order_by("-size").first()
