"""What a receipt bundle proves, and the checks that prove it.

A bundle (what the service serves at ``/log/proof/<token>``) is::

    {"content": {...the signed fiscal content, with its "kid"...},
     "signature": "<base64 Ed25519 signature of the content's canonical form>",
     "leaf_index": 41, "tree_size": 1000,
     "inclusion": ["<base64 hash>", ...],
     "checkpoint": "<the signed checkpoint of tree_size, a C2SP signed note>"}

The log's leaf for a receipt is the canonical form of its content: the leaf hash is
SHA-256(0x00 || JCS(content)), so the log commits to exactly what was signed.

The content's ``v`` is its version. Version 2 adds ``number``: the receipt's number as it
is printed on it (``MP-2026-000123``; null for a receipt issued before receipts were
numbered), and for a void or a set aside the number of the receipt it names. Version 1,
what the log's first entries are, signs no number. Version 3 adds ``merchant.identity``:
the merchant's legal name and registration number as Receco's operator checked them (null
when nobody checked them: the merchant's ``name`` is then only what the merchant calls
itself), and signs a refund's share of its sale's tax lines and card. A content of another
version is refused: this verifier cannot say what it signs.

``livemode`` false marks a test receipt: made with a test key, or for a ``test-`` merchant,
by anyone, under any name. It records no purchase. Receco no longer signs test receipts;
the log's early entries hold some, still genuine, still test receipts.
"""

import base64
import binascii
from dataclasses import dataclass

from receco_verify import merkle, note
from receco_verify.canonical import CanonicalFormError, canonicalize
from receco_verify.keys import PublicKey

BUNDLE_FIELDS = ("content", "signature", "leaf_index", "tree_size", "inclusion", "checkpoint")
CONTENT_VERSIONS = (1, 2, 3)
NUMBERED_FROM = 2  # the first version that signs the receipt's number
IDENTIFIED_FROM = 3  # the first version that signs the merchant's checked identity and a refund's share


class VerificationError(ValueError):
    """One check failed; the message says which and why."""


@dataclass(frozen=True)
class Signed:
    """What a valid signature vouches for, for a report: the key, the content's version,
    from version 2 the receipt's number (None when it has none), the merchant's id, whether
    it is a live receipt (False: a test receipt, no purchase), and from version 3 the
    merchant's identity as Receco's operator checked it (None: not checked)."""

    key: PublicKey
    version: int
    number: str | None
    merchant_id: str | None = None
    livemode: bool = True
    identity: dict | None = None

    @property
    def numbered(self) -> bool:
        """Whether the content's version signs the receipt's number."""
        return self.version >= NUMBERED_FROM

    @property
    def identified(self) -> bool:
        """Whether the content's version states the merchant's checked identity (or that it has none)."""
        return self.version >= IDENTIFIED_FROM


@dataclass(frozen=True)
class Verified:
    """What was checked, for a report."""

    kid: str
    leaf_index: int
    tree_size: int
    origin: str
    checked_against: note.Checkpoint
    signed: Signed


def content_leaf(content: dict) -> bytes:
    """The log's leaf hash of signed ``content``: SHA-256(0x00 || JCS(content))."""
    return merkle.leaf_hash(canonicalize(content))


def verify_signature(content: dict, signature: bytes, keys: dict[str, PublicKey]) -> Signed:
    """What ``signature`` vouches for: the key that signed ``content``, named by its
    ``kid``, and the content's version and number (``content_version``).

    Raises VerificationError when the key is not published, the signature is not its, or
    the content is of a version this verifier does not know.
    """
    kid = content.get("kid") if isinstance(content, dict) else None
    if not isinstance(kid, str):
        raise VerificationError("the signed content names no key (kid)")
    key = keys.get(kid)
    if key is None:
        raise VerificationError(f"the key {kid} that signed the receipt is not among the published keys")
    try:
        message = canonicalize(content)
    except CanonicalFormError as error:
        raise VerificationError(f"the content has no canonical form: {error}") from None
    if not key.verify(signature, message):
        raise VerificationError("the signature does not match the receipt's content: it was changed after signing")
    version = content_version(content)
    merchant = content.get("merchant") if isinstance(content.get("merchant"), dict) else {}
    return Signed(
        key,
        version,
        content["number"] if version >= NUMBERED_FROM else None,
        merchant.get("id"),
        content.get("livemode") is not False,
        merchant.get("identity") if version >= IDENTIFIED_FROM else None,
    )


def content_version(content: dict) -> int:
    """The version of ``content`` (its ``v``), one of CONTENT_VERSIONS.

    Raises VerificationError for another version, a version 2 content without its number
    (a string, or null), or a version 3 content without the merchant's identity (null, or
    its ``legal_name``, a string, and ``registration_number``, a string or null).
    """
    version = content.get("v")
    if isinstance(version, bool) or version not in CONTENT_VERSIONS:
        known = ", ".join(map(str, CONTENT_VERSIONS[:-1])) + f" and {CONTENT_VERSIONS[-1]}"
        raise VerificationError(
            f"the content is of version (v) {version!r}, this verifier knows versions {known}: "
            "install a newer receco-verify"
        )
    if version >= NUMBERED_FROM:
        number = content.get("number", False)
        if not (number is None or isinstance(number, str)):
            raise VerificationError(f"a content of version {version} signs the receipt's number: it has none")
    if version >= IDENTIFIED_FROM:
        merchant = content.get("merchant")
        identity = merchant.get("identity", False) if isinstance(merchant, dict) else False
        if not (identity is None or _is_identity(identity)):
            raise VerificationError(
                f"a content of version {version} states the merchant's checked identity: it has none"
            )
    return version


def _is_identity(value) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("legal_name"), str)
        and (value.get("registration_number") is None or isinstance(value.get("registration_number"), str))
    )


def verify_bundle(
    bundle: dict, keys: dict[str, PublicKey], checkpoint: str | None = None, origin: str | None = None
) -> Verified:
    """Check a bundle: its content's signature by a published key, its checkpoint's
    signature, and the content's inclusion in the tree the checkpoint names. ``checkpoint``
    (a signed note) replaces the bundle's own: then its tree size must be the proof's.

    Raises VerificationError naming the first check that failed.
    """
    if not isinstance(bundle, dict) or any(name not in bundle for name in BUNDLE_FIELDS):
        raise VerificationError(f"a receipt bundle has the fields {', '.join(BUNDLE_FIELDS)}")
    content = bundle["content"]
    if not isinstance(content, dict):
        raise VerificationError("the bundle's content is not an object")
    signed = verify_signature(content, _b64(bundle["signature"], "signature"), keys)

    try:
        trusted = note.verify_checkpoint(checkpoint or bundle["checkpoint"], keys.values(), origin)
    except note.NoteError as error:
        raise VerificationError(f"the checkpoint is not valid: {error}") from None

    index, size = bundle["leaf_index"], bundle["tree_size"]
    if not (isinstance(index, int) and isinstance(size, int)) or isinstance(index, bool) or isinstance(size, bool):
        raise VerificationError("leaf_index and tree_size are whole numbers")
    if size != trusted.size:
        raise VerificationError(
            f"the inclusion proof is for a tree of {size} receipts, the checkpoint is of {trusted.size}: "
            "fetch the proof again for this checkpoint"
        )
    if not isinstance(bundle["inclusion"], list):
        raise VerificationError("the inclusion proof is a list of hashes")
    path = [_b64(value, "inclusion proof hash") for value in bundle["inclusion"]]
    try:
        merkle.verify_inclusion(content_leaf(content), index, size, path, trusted.root)
    except merkle.ProofError as error:
        raise VerificationError(f"the receipt is not in the log at {index}: {error}") from None
    return Verified(signed.key.kid, index, size, trusted.origin, trusted, signed)


def _b64(value, what: str) -> bytes:
    if not isinstance(value, str):
        raise VerificationError(f"the {what} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise VerificationError(f"the {what} is not base64") from None
