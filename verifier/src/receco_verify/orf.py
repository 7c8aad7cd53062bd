"""A receipt file in the Open Receipt Format, as "Download for your records" saves it: its
``trust`` (``hash``: SHA-256 hex of the canonical signed content, ``hash_algorithm``
``SHA-256``, ``signature``: Ed25519 in base64, ``signed_by``: the key's id) and, under
``extensions.receco``, the ``signed_content`` and, once the receipt is in the log, the
``log`` proof (``leaf_index``, ``tree_size``, ``inclusion``, ``checkpoint``).

``bundle_of`` turns such a file into the proof bundle ``receipt.verify_bundle`` checks;
``check_trust`` checks that its trust fields describe the content they come with.
"""

import hashlib

from receco_verify.canonical import CanonicalFormError, canonicalize
from receco_verify.receipt import VerificationError

EXTENSION = "receco"
HASH_ALGORITHM = "SHA-256"
LOG_FIELDS = ("leaf_index", "tree_size", "inclusion", "checkpoint")


class NotInLog(VerificationError):
    """The file is signed, but carries no proof of the receipt's place in the log yet."""


def is_orf(document) -> bool:
    """Whether ``document`` is an ORF file (rather than a proof bundle)."""
    return isinstance(document, dict) and "orf_version" in document


def signed_part(document) -> tuple[dict, dict, dict | None]:
    """(trust, signed content, log proof or None) of an ORF receipt file, as it states them.

    Raises VerificationError when the file carries no signature or a malformed proof.
    """
    trust = document.get("trust")
    extension = (document.get("extensions") or {}).get(EXTENSION)
    if not isinstance(trust, dict) or not isinstance(extension, dict) or "signed_content" not in extension:
        raise VerificationError("the file carries no signature (no trust and extensions.receco.signed_content)")
    content = extension["signed_content"]
    if not isinstance(content, dict):
        raise VerificationError("the file's signed content is not an object")
    log = extension.get("log")
    if log is not None and (not isinstance(log, dict) or any(name not in log for name in LOG_FIELDS)):
        raise VerificationError(f"the file's log proof has the fields {', '.join(LOG_FIELDS)}")
    return trust, content, log


def check_trust(document) -> None:
    """Check that the file's trust fields describe its signed content: ``hash`` is its
    SHA-256, ``signed_by`` the key it names. (The signature itself is checked with the
    content, by ``receipt.verify_signature``.)

    Raises VerificationError when they do not.
    """
    trust, content, _ = signed_part(document)
    if trust.get("hash_algorithm") != HASH_ALGORITHM:
        raise VerificationError(f"trust.hash_algorithm is {trust.get('hash_algorithm')!r}, not {HASH_ALGORITHM!r}")
    try:
        digest = hashlib.sha256(canonicalize(content)).hexdigest()
    except CanonicalFormError as error:
        raise VerificationError(f"the content has no canonical form: {error}") from None
    if trust.get("hash") != digest:
        raise VerificationError("trust.hash is not the SHA-256 of the signed content: the file was changed")
    if trust.get("signed_by") != content.get("kid"):
        raise VerificationError("trust.signed_by is not the key the signed content names (kid)")


def bundle_of(document) -> dict:
    """The proof bundle an ORF receipt file carries.

    Raises NotInLog when it carries no log proof yet, VerificationError when it carries
    no signature or a malformed proof (``signed_part``).
    """
    trust, content, log = signed_part(document)
    if log is None:
        raise NotInLog("the file carries no proof of the receipt's place in the log yet")
    return {"content": content, "signature": trust.get("signature"), **{name: log[name] for name in LOG_FIELDS}}
