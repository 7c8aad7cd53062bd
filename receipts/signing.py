"""What a receipt's signature covers: its fiscal content, canonical (RFC 8785) and signed
(Ed25519) with the service's current key (docs/verification.md, "What is signed").

The content is built from the receipt's own row as it was written: the merchant as the
receipt states it, the items, amounts, tax lines, payment summary, dates, token and short
code, the sale a refund refers to, and the key's id. Never the customer's email or phone:
erasing a contact changes nothing signed. Nothing that changes after the sale is signed
either (its status, the refunds recorded on it, the branding), so a refund or a void never
breaks the sale's signature: each is an entry of its own. Nor is a receipt set aside
(receipts.creation) edited in the log: its entry keeps the token and short code it was
issued with (``identities``), and the set aside is an entry of its own, from those to
the fresh ones.
"""

from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from typing import NamedTuple

from receco_verify.merkle import leaf_hash

from receco.lib.canonical import canonicalize
from receco.lib.signingkeys import Keyring
from receipts.models import Receipt, SetAside, Void
from receipts.representation import iso_utc

CONTENT_VERSION = 1
PAYMENT_SUMMARY = ("card_brand", "card_last4", "authorization_code")


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
    (``values_list(*ContentRow._fields)``, the merchant's id annotated): what the log's
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
    merchant_string_id: str

    receipt_type = property(Receipt.receipt_type.fget)  # the model's own rule


def identities(receipt: Receipt | ContentRow, set_asides: list[SetAside] = ()) -> list[tuple[str, str]]:
    """The (token, short code) pairs ``receipt`` has had, oldest first: those each of its
    ``set_asides`` (all of them, in any order) took from it, then its own now."""
    taken = [(sa.claimed_token, sa.claimed_short_code) for sa in sorted(set_asides, key=lambda sa: sa.pk)]
    return [*taken, (receipt.token, receipt.short_code)]


def receipt_content(
    receipt: Receipt | ContentRow, merchant_string_id: str, kid: str, identity: tuple[str, str] | None = None
) -> dict:
    """The fiscal content of a sale or refund receipt, as signed by the key ``kid``.

    ``merchant_string_id`` is the id of the receipt's merchant (the public one POS systems
    send), passed in so that a batch needs no query per receipt. ``identity``: the token
    and short code it was issued with, when it has been set aside since (``identities``).
    """
    details = receipt.details or {}
    payment = details.get("payment_details") or {}
    token, short_code = identity or (receipt.token, receipt.short_code)
    content = {
        "v": CONTENT_VERSION,
        "kid": kid,
        "type": receipt.receipt_type,
        "token": token,
        "short_code": short_code,
        "livemode": receipt.livemode,
        "merchant": {"id": merchant_string_id, "name": receipt.merchant_name, "location": receipt.location},
        "transaction_date": iso_utc(receipt.transaction_date),
        "issued_at": iso_utc(receipt.created_at),
        "currency": receipt.currency,
        "total_amount": receipt.total_amount,
        "subtotal_amount": details.get("subtotal_amount"),
        "discount_amount": details.get("discount_amount"),
        "tip_amount": details.get("tip_amount"),
        "items": receipt.items,
        "tax_lines": details.get("tax_lines") or [],
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
    void: Void, receipt: Receipt, merchant_string_id: str, kid: str, identity: tuple[str, str] | None = None
) -> dict:
    """The content of a void, an entry of its own that names the sale it cancels (by the
    ``identity`` it was issued with, when it has been set aside since)."""
    token, short_code = identity or (receipt.token, receipt.short_code)
    return {
        "v": CONTENT_VERSION,
        "kid": kid,
        "type": "void",
        "token": token,
        "short_code": short_code,
        "livemode": receipt.livemode,
        "merchant": {"id": merchant_string_id, "name": receipt.merchant_name, "location": receipt.location},
        "voided_at": iso_utc(void.created_at),
        "reason": void.reason or None,
    }


def set_aside_content(
    set_aside: SetAside, receipt: Receipt, merchant_string_id: str, kid: str, was: tuple[str, str], now: tuple[str, str]
) -> dict:
    """The content of a receipt set aside, an entry of its own: the receipt that was
    ``was`` (token, short code) is ``now``, so that a keyed sale could take ``was``."""
    return {
        "v": CONTENT_VERSION,
        "kid": kid,
        "type": "set_aside",
        "token": now[0],
        "short_code": now[1],
        "livemode": receipt.livemode,
        "merchant": {"id": merchant_string_id, "name": receipt.merchant_name, "location": receipt.location},
        "set_aside_at": iso_utc(set_aside.created_at),
        "was": {"token": was[0], "short_code": was[1]},
    }


def sign(content: dict, keyring: Keyring) -> Signed:
    """``content`` canonicalized and signed with the current key, whose id it must name.

    Raises ValueError when ``content`` names another key, CanonicalFormError when it has
    no canonical form.
    """
    if content.get("kid") != keyring.kid:
        raise ValueError(f"the content names the key {content.get('kid')!r}, the current key is {keyring.kid!r}")
    canonical = canonicalize(content)
    return Signed(content, canonical, keyring.sign(canonical), keyring.kid)
