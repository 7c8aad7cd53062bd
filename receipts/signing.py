"""What a receipt's signature covers: its fiscal content, canonical (RFC 8785) and signed
(Ed25519) with the service's current key (docs/verification.md, "What is signed").

The content is built from the receipt's own row as it was written: the merchant as the
receipt states it, the items, amounts, tax lines, payment summary, dates, token and short
code, its number (since version 2), the sale a refund refers to, and the key's id. Never
the customer's email or phone: erasing a contact changes nothing signed. Nothing that
changes after the sale is signed either (its status, the refunds recorded on it, the
branding, and the merchant's legal name, address, tax and registration numbers, which the
receipt shows from the merchant's record as it is now), so a refund or a void never
breaks the sale's signature: each is an entry of its own. Nor is a receipt set aside
(receipts.creation) edited in the log: its entry keeps the token and short code it was
issued with (``identities``), and the set aside is an entry of its own, from those to
the fresh ones.

Each entry is signed in one version of the content and rebuilt in that version ever
after (the log's leaf keeps it): version 1 (the first entries) lacks the number that
version 2 adds; version 3 adds the merchant's identity as the operator checked it (the
log's leaf keeps what it was when the entry was appended, ``Identity``) and signs a
refund's share of its sale's tax lines and card, which its receipt file states; nothing
once signed is signed again.

Test receipts are never signed (ledger.appender): anyone may make one, under any name.
"""

from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from typing import NamedTuple

from receco_verify.canonical import canonicalize
from receco_verify.merkle import leaf_hash

from receco.lib.signingkeys import Keyring
from receipts.models import Receipt, SetAside, Void
from receipts.rendering.documents import refund_share
from receipts.rendering.representation import iso_utc

# The version new entries are signed in; every version an entry of the log may be in.
CONTENT_VERSION = 3
CONTENT_VERSIONS = (1, 2, 3)
NUMBERED_FROM = 2  # the first version that signs the receipt's number
IDENTIFIED_FROM = 3  # the first version that signs the merchant's checked identity and a refund's share
PAYMENT_SUMMARY = ("card_brand", "card_last4", "authorization_code")


class Identity(NamedTuple):
    """A merchant's legal identity as Receco's operator checked it (merchants.models.Merchant
    ``checked_identity``), as a version 3 content states it; ``legal_name`` empty: not checked."""

    legal_name: str = ""
    registration_number: str = ""

    def signed(self) -> dict | None:
        """The content's ``merchant.identity``: None when nobody checked it."""
        if not self.legal_name:
            return None
        return {"legal_name": self.legal_name, "registration_number": self.registration_number or None}


UNCHECKED = Identity()


@dataclass(frozen=True)
class Signed:
    """One signed entry of the log: the canonical bytes of its content and their hashes."""

    content: dict
    canonical: bytes
    signature: bytes
    kid: str

    @property
    def digest(self) -> bytes:
        """SHA-256 of the canonical content."""
        return sha256(self.canonical).digest()

    @property
    def leaf_hash(self) -> bytes:
        """The log's leaf hash, SHA-256(0x00 || canonical content)."""
        return leaf_hash(self.canonical)


class ContentRow(NamedTuple):
    """The columns of a receipt that its content holds, as a query reads them
    (``values_list(*ContentRow._fields)``, the merchant's id and checked identity annotated): what the log's
    appender builds thousands of contents from, without a model instance for each (which
    costs as much again as the row itself). ``receipt_content`` takes it for a Receipt."""

    id: int
    token: str
    short_code: str
    livemode: bool
    merchant_name: str
    location: str | None
    transaction_date: datetime
    created_at: datetime
    currency: str
    total_amount: int
    items: list
    details: dict | None
    payment_method: str | None
    refund_of_id: int | None
    number_series: str | None
    number: int | None
    merchant_string_id: str
    checked_legal_name: str  # the merchant's checked identity (Identity), read with the receipt
    checked_registration_number: str

    # The model's own rules.
    receipt_type = property(Receipt.receipt_type.fget)
    receipt_number = property(Receipt.receipt_number.fget)
    detail = Receipt.detail


def identities(receipt: Receipt | ContentRow, set_asides: list[SetAside] = ()) -> list[tuple[str, str]]:
    """The (token, short code) pairs ``receipt`` has had, oldest first: those each of its
    ``set_asides`` (all of them, in any order) took from it, then its own now."""
    taken = [(sa.claimed_token, sa.claimed_short_code) for sa in sorted(set_asides, key=lambda sa: sa.pk)]
    return [*taken, (receipt.token, receipt.short_code)]


def receipt_content(
    receipt: Receipt | ContentRow,
    merchant_string_id: str,
    kid: str,
    identity: tuple[str, str] | None = None,
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
    sale: Receipt | None = None,
) -> dict:
    """The fiscal content of a sale or refund receipt, as signed by the key ``kid`` in
    ``version`` of the content (CONTENT_VERSIONS).

    ``merchant_string_id`` is the id of the receipt's merchant (the public one POS systems
    send), passed in so that a batch needs no query per receipt. ``identity``: the token
    and short code it was issued with, when it has been set aside since (``identities``).
    ``checked``: the merchant's identity as its entry states it (version 3). ``sale``: a
    refund's sale, whose share of tax lines and card version 3 signs (read from the refund
    when not given: a query). Raises ValueError for a version that is not one of
    CONTENT_VERSIONS.
    """
    details = receipt.details or {}
    tax_lines, payment = details.get("tax_lines") or [], details.get("payment_details") or {}
    if receipt.refund_of_id and version >= IDENTIFIED_FROM:
        share = refund_share(receipt, sale if sale is not None else receipt.refund_of)
        tax_lines, payment = share.tax_lines, share.payment_details or {}
    token, short_code = identity or (receipt.token, receipt.short_code)
    content = {
        **_head(version, kid, receipt.receipt_type, token, short_code, receipt),
        "merchant": _merchant(version, merchant_string_id, receipt, checked),
        "transaction_date": iso_utc(receipt.transaction_date),
        "issued_at": iso_utc(receipt.created_at),
        "currency": receipt.currency,
        "total_amount": receipt.total_amount,
        "subtotal_amount": details.get("subtotal_amount"),
        "discount_amount": details.get("discount_amount"),
        "tip_amount": details.get("tip_amount"),
        "items": receipt.items,
        "tax_lines": tax_lines,
        "payment": {"method": receipt.payment_method, **{name: payment.get(name) for name in PAYMENT_SUMMARY}},
        "refund_of": None,
    }
    if receipt.refund_of_id:
        content["refund_of"] = {
            "token": details.get("refund_of"),
            "short_code": details.get("refund_of_short_code"),
            "lines": details.get("lines") or [],
            "reason": details.get("reason"),
        }
    return content


def void_content(
    void: Void,
    receipt: Receipt,
    merchant_string_id: str,
    kid: str,
    identity: tuple[str, str] | None = None,
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
) -> dict:
    """The content of a void, an entry of its own that names the sale it cancels (by the
    ``identity`` it was issued with, when it has been set aside since, and from version 2
    by its number). Raises ValueError for a version that is not one of CONTENT_VERSIONS."""
    token, short_code = identity or (receipt.token, receipt.short_code)
    return {
        **_head(version, kid, "void", token, short_code, receipt),
        "merchant": _merchant(version, merchant_string_id, receipt, checked),
        "voided_at": iso_utc(void.created_at),
        "reason": void.reason or None,
    }


def set_aside_content(
    set_aside: SetAside,
    receipt: Receipt,
    merchant_string_id: str,
    kid: str,
    was: tuple[str, str],
    now: tuple[str, str],
    version: int = CONTENT_VERSION,
    *,
    checked: Identity = UNCHECKED,
) -> dict:
    """The content of a receipt set aside, an entry of its own: the receipt that was
    ``was`` (token, short code) is ``now``, so that a sale it gave way to could take
    ``was``; from version 2 its number, which a set aside keeps. Raises ValueError for a
    version that is not one of CONTENT_VERSIONS."""
    return {
        **_head(version, kid, "set_aside", now[0], now[1], receipt),
        "merchant": _merchant(version, merchant_string_id, receipt, checked),
        "set_aside_at": iso_utc(set_aside.created_at),
        "was": {"token": was[0], "short_code": was[1]},
    }


def _merchant(version: int, merchant_string_id: str, receipt: Receipt | ContentRow, checked: Identity) -> dict:
    """Who issued the receipt: the merchant's id, the name and location the receipt states
    (the merchant's own words), and from version 3 its identity as the operator checked it."""
    merchant = {"id": merchant_string_id, "name": receipt.merchant_name, "location": receipt.location}
    if version >= IDENTIFIED_FROM:
        merchant["identity"] = checked.signed()
    return merchant


def _head(version: int, kid: str, kind: str, token: str, short_code: str, receipt: Receipt | ContentRow) -> dict:
    """What every entry's content opens with: its version, key, type, the receipt it names
    and, from version 2, that receipt's number as it is printed (None for a receipt stored
    before receipts were numbered)."""
    if version not in CONTENT_VERSIONS:
        raise ValueError(f"no content version {version!r}: the versions are {CONTENT_VERSIONS}")
    head = {"v": version, "kid": kid, "type": kind, "token": token, "short_code": short_code}
    if version >= NUMBERED_FROM:
        head["number"] = receipt.receipt_number
    head["livemode"] = receipt.livemode
    return head


def sign(content: dict, keyring: Keyring) -> Signed:
    """``content`` canonicalized and signed with the current key, whose id it must name.

    Raises ValueError when ``content`` names another key, CanonicalFormError when it has
    no canonical form.
    """
    if content.get("kid") != keyring.kid:
        raise ValueError(f"the content names the key {content.get('kid')!r}, the current key is {keyring.kid!r}")
    canonical = canonicalize(content)
    return Signed(content, canonical, keyring.sign(canonical), keyring.kid)
