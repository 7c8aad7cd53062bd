"""A receipt's Open Receipt Format document with its ``trust`` filled: what "Download for
your records" and getReceipt's ``"format": "orf"`` answer (docs/verification.md, "The
receipt file").

ORF 0.1 reserves ``trust.hash``, ``hash_algorithm``, ``signature`` and ``signed_by``
without saying how to fill them. Here ``hash`` is the SHA-256 (hex) of the canonical
signed content, ``signature`` its Ed25519 signature (base64) and ``signed_by`` the key's
id. The signed content itself travels under ``extensions.receco.signed_content`` (ORF's
own fields are a reading of it, in major units), and once the receipt is in the log,
``extensions.receco.log`` holds its inclusion proof and the signed checkpoint it leads to:
with the published keys, the file proves itself with no network.
"""

import base64
from hashlib import sha256

from django.conf import settings
from receco_verify import money
from receco_verify.canonical import canonicalize

from ledger import bundles, checkpoints, entries
from receco.lib import signingkeys
from receipts.models import Receipt
from receipts.rendering import orf
from receipts.signing import Identity, sign

HASH_ALGORITHM = "SHA-256"


def document(receipt: Receipt) -> dict:
    """The ORF document of ``receipt`` with its trust and proof.

    A receipt the log holds carries the signature the log stored, over its content as its
    row states it now (a row changed since fails its signature, as its proof bundle does),
    and its proof against the latest checkpoint that covers it; ``log`` is None until
    then. A receipt not appended yet is signed now with the current key, as the appender
    will sign it (Ed25519 signatures are deterministic). A test receipt the log does not
    hold, and any receipt with signing off and not in the log, has no ``trust``: test
    receipts are never signed.
    """
    doc = orf.document(receipt, receipt.merchant)
    signed = _signed(receipt)
    if signed is None:
        return doc
    content, signature, log = signed
    doc["trust"] = {
        "hash": sha256(canonicalize(content)).hexdigest(),
        "hash_algorithm": HASH_ALGORITHM,
        "signature": signature,
        "signed_by": content["kid"],
    }
    extension = doc["extensions"][orf.EXTENSION]
    extension["signed_content"] = content
    extension["log"] = log
    return doc


def _signed(receipt: Receipt) -> tuple[dict, str, dict | None] | None:
    """(content, base64 signature, log proof or None), or None when nothing can sign it."""
    latest = checkpoints.latest_cached()
    if latest is not None:
        try:
            found = bundles.bundle(receipt, latest)
        except (bundles.NotLogged, bundles.NeverLogged):
            pass
        else:
            log = {name: found[name] for name in ("leaf_index", "tree_size", "inclusion", "checkpoint")}
            return found["content"], found["signature"], log
    appended = bundles.signed(receipt)
    if appended is not None:  # appended, not in a published checkpoint yet
        content, signature = appended
        return content, _b64(signature), None
    keyring = signingkeys.keyring()
    if keyring is None or receipt.is_test:
        return None
    merchant = receipt.merchant
    asides = entries.set_asides_of([receipt.pk]).get(receipt.pk, [])
    checked = Identity(merchant.checked_legal_name, merchant.checked_registration_number)
    entry = sign(entries.receipt_entry(receipt, merchant.string_id, keyring.kid, asides, checked=checked), keyring)
    return entry.content, _b64(entry.signature), None


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def published() -> dict:
    """What the verify page trusts, embedded in it when served so that it checks a saved
    file with the service stopped: every published key (a JWK Set's ``keys``), the log's
    origin, the latest signed checkpoint (None before the first), and the currencies'
    exponents it reads a file's amounts by."""
    ring = signingkeys.keyring()
    latest = checkpoints.latest_cached()
    return {
        "keys": ring.jwks()["keys"] if ring else [],
        "origin": settings.RECECO_LOG_ORIGIN,
        "checkpoint": latest.note if latest else None,
        # How many digits of each currency's amounts are minor units: a file states its
        # amounts in major units, its signed content in minor ones (receco_verify.orf).
        "currencies": {"digits": money.MINOR_DIGITS, "default": money.DEFAULT_DIGITS},
    }
