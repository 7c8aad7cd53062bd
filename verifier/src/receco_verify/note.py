"""C2SP signed notes (c2sp.org/signed-note) and transparency log checkpoints
(c2sp.org/tlog-checkpoint), Ed25519 signatures only.

A note is its text (lines ending in newline), a blank line, then signature lines
``— <key name> <base64(key id || signature)>``. An Ed25519 key's id is the first four bytes
of SHA-256(key name || 0x0A || 0x01 || public key); the signature covers the text.
A checkpoint's text is the log's origin, the tree size in decimal, the root hash in base64,
then optional extension lines.
"""

import base64
import binascii
import hashlib
from dataclasses import dataclass

ED25519 = b"\x01"
DASH = "\u2014"
MAX_NOTE = 1 << 20


class NoteError(ValueError):
    """A note or checkpoint that is malformed, or that no trusted key signed."""


def key_id(name: str, public: bytes) -> bytes:
    """The 4-byte note key id of the Ed25519 key ``public`` named ``name``."""
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


def verifier_key(name: str, public: bytes) -> str:
    """The note verifier key string ``<name>+<hex key id>+<base64(0x01 || key)>``."""
    return f"{name}+{key_id(name, public).hex()}+{base64.b64encode(ED25519 + public).decode()}"


def sign(text: str, name: str, sign_bytes, public: bytes) -> str:
    """The signed note of ``text`` (which must end in a newline) signed by the key named
    ``name``: ``sign_bytes(message) -> 64-byte signature``.

    Raises NoteError when ``text`` cannot be a note's text.
    """
    _check_text(text)
    _check_name(name)
    signature = sign_bytes(text.encode())
    return f"{text}\n{DASH} {name} {base64.b64encode(key_id(name, public) + signature).decode()}\n"


@dataclass(frozen=True)
class Signature:
    name: str
    id: bytes
    signature: bytes


def parse(note: str) -> tuple[str, list[Signature]]:
    """A note's text and its signature lines (unverified).

    Raises NoteError when the note is malformed.
    """
    if len(note) > MAX_NOTE:
        raise NoteError("the note is too long")
    text, sep, block = note.rpartition("\n\n")
    if not sep:
        raise NoteError("the note has no signature block (a blank line, then signature lines)")
    text += "\n"
    _check_text(text)
    if not block.endswith("\n"):
        raise NoteError("the note's last line does not end in a newline")
    signatures = []
    for line in block[:-1].split("\n"):
        prefix = DASH + " "
        if not line.startswith(prefix):
            raise NoteError(f"not a signature line: {line!r}")
        name, space, encoded = line[len(prefix) :].rpartition(" ")
        if not space:
            raise NoteError(f"not a signature line: {line!r}")
        _check_name(name)
        try:
            raw = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise NoteError(f"the signature of {name} is not base64") from None
        if len(raw) < 5:
            raise NoteError(f"the signature of {name} is too short")
        signatures.append(Signature(name, raw[:4], raw[4:]))
    return text, signatures


def verify(note: str, name: str, keys) -> str:
    """The text of ``note`` once a signature by one of ``keys`` (PublicKey) under the key
    name ``name`` is checked.

    Raises NoteError when it is malformed or none of ``keys`` signed it.
    """
    text, signatures = parse(note)
    by_id = {key_id(name, key.public): key for key in keys}
    for signature in signatures:
        key = by_id.get(signature.id) if signature.name == name else None
        if key is not None and key.verify(signature.signature, text.encode()):
            return text
    raise NoteError(f"no valid signature by a published key named {name!r}")


@dataclass(frozen=True)
class Checkpoint:
    """A log's signed statement: the tree of ``size`` leaves has root ``root``."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        """The checkpoint's note text."""
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(), *self.extensions]
        return "".join(line + "\n" for line in lines)


def parse_checkpoint(text: str) -> Checkpoint:
    """The checkpoint a note text states.

    Raises NoteError when it is not a checkpoint.
    """
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise NoteError("a checkpoint has an origin, a tree size and a root hash, each on a line")
    origin, size, root, *extensions = lines[:-1]
    if not origin:
        raise NoteError("the checkpoint has no origin")
    if not size.isdigit() or (size != "0" and size.startswith("0")) or not size.isascii():
        raise NoteError(f"the checkpoint's tree size {size!r} is not a decimal number")
    try:
        root_hash = base64.b64decode(root, validate=True)
    except binascii.Error:
        raise NoteError("the checkpoint's root hash is not base64") from None
    if len(root_hash) != 32:
        raise NoteError(f"the checkpoint's root hash has {len(root_hash)} bytes, not 32")
    if any(not line for line in extensions):
        raise NoteError("the checkpoint has an empty extension line")
    value = int(size)
    if value >= 1 << 64:
        raise NoteError("the checkpoint's tree size is too large")
    return Checkpoint(origin, value, root_hash, tuple(extensions))


def verify_checkpoint(note: str, keys, origin: str | None = None) -> Checkpoint:
    """The checkpoint of a signed note, once a signature by one of ``keys`` under its origin
    as key name is checked (and its origin is ``origin`` when given).

    Raises NoteError otherwise.
    """
    text, _ = parse(note)
    checkpoint = parse_checkpoint(text)
    if origin is not None and checkpoint.origin != origin:
        raise NoteError(f"the checkpoint is of the log {checkpoint.origin!r}, not {origin!r}")
    verify(note, checkpoint.origin, keys)
    return checkpoint


def _check_text(text: str) -> None:
    if not text.endswith("\n"):
        raise NoteError("a note's text ends in a newline")
    if "\n\n" in text or text.startswith("\n"):
        raise NoteError("a note's text has no blank line")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise NoteError("a note's text has no control characters")


def _check_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError(f"a key name has no spaces and no '+': {name!r}")


__all__ = ["Checkpoint", "NoteError", "key_id", "parse", "parse_checkpoint", "sign", "verify", "verify_checkpoint"]
