"""What a wallet pass of a receipt says, whichever wallet holds it.

A pass is a copy the customer carries away, signed with the operator's certificate, so it
follows the rules of the messages the service sends (receipts.rendering.messages): what came with a
sale made without the merchant's key (items, location, payment, status) stays on the
page; its link is the short-code address the service chose (``Receipt.message_url``),
never a token a POS chose. It never holds the customer's email address or phone number.
"""

import hashlib
from dataclasses import dataclass

from receipts.models import Receipt
from receipts.rendering.display import receipt_context


@dataclass(frozen=True)
class Field:
    """One labelled value on a pass: ``key`` names it for the wallet (unique on a pass)."""

    key: str
    label: str
    value: str


@dataclass(frozen=True)
class Card:
    pass_id: str  # the pass's own name in the wallet: one per receipt and deployment
    shop: str
    description: str  # the whole pass in one sentence, for screen readers
    total_label: str
    total: str
    date: str  # in the shop's time zone, named
    code: str
    url: str  # the QR code's message and the pass's link
    background: str  # "#rrggbb": the shop's colour, or the house colour
    foreground: str  # black or white, whichever reads on ``background``
    voided: bool
    test: bool
    details: tuple[Field, ...]  # the back of the pass


def pass_id(receipt: Receipt) -> str:
    """The pass's serial number (Apple) and object id suffix (Google): derived from the
    receipt's address, so it is the same each time the receipt is added (the wallet then
    replaces the pass rather than holding two), differs between deployments, and says
    nothing a POS chose."""
    return hashlib.sha256(f"receco-pass:{receipt.public_url}".encode()).hexdigest()[:40]


def card_of(receipt: Receipt) -> Card:
    """The pass of ``receipt`` (one query for its merchant, one more if it was refunded)."""
    context = receipt_context(receipt)
    total_label = _total_label(context)
    return Card(
        pass_id=pass_id(receipt),
        shop=receipt.merchant_name,
        description=f"{context['title']} from {receipt.merchant_name}: {total_label} {context['total']}",
        total_label=total_label,
        total=context["total"],
        date=context["date_short"],
        code=receipt.short_code,
        url=receipt.message_url,
        background=context["accent"],
        foreground=context["accent_text"],
        voided=context["void"] is not None,
        test=receipt.is_test,
        details=tuple(_details(receipt, context)),
    )


def _total_label(context: dict) -> str:
    if context["void"] is not None:
        return "Voided"
    if context["is_refund"]:
        return "Refunded to you"
    return "Total paid" if context["is_completed"] else "Total"


def _details(receipt: Receipt, context: dict):
    if receipt.is_test:
        yield Field("test", "Test receipt", "Not a real sale.")
    void = context["void"]
    if void is not None:
        yield Field(
            "void", "Voided", f"Cancelled on {context['void_date']}" + (f": {void.reason}" if void.reason else "")
        )
    if context["is_refund"] and context["refund_of_code"]:
        yield Field("refund_of", "Refund of", f"Receipt {context['refund_of_code']}")
    if context["refunds"]:
        refunds = [f"Refund {refund.short_code}: {refund.amount}" for refund in context["refunds"]]
        yield Field("refunds", f"Refunded: {context['refunded']}", "\n".join(refunds))
    yield Field("issued", "Date", context["date_long"])
    if context["itemised"]:
        lines = [f"{line.quantity} × {line.name}: {line.total_price}" for line in context["lines"]]
        lines += [f"{row.label}: {row.amount}" for row in context["breakdown"]]
        if lines:
            yield Field("items", "Items", "\n".join(lines))
        payment = " ".join(filter(None, [context["payment_words"], context["card"]]))
        if payment:
            yield Field("payment", "Refunded to" if context["is_refund"] else "Payment", payment)
        if receipt.location:
            yield Field("location", "Location", receipt.location)
        yield Field("status", "Status", context["status_words"])
    yield Field("code", "Receipt code", receipt.short_code)
    yield Field("issuer", "Issued by", _issuer(receipt, context))
    merchant = context["merchant"]
    if merchant.return_policy:
        yield Field("returns", "Returns", merchant.return_policy)


def _issuer(receipt: Receipt, context: dict) -> str:
    """The merchant as its record says now: legal name, address, tax and registration
    numbers, contact, a line each."""
    merchant = context["merchant"]
    lines = [merchant.legal_name or receipt.merchant_name]
    lines += [merchant.address] if merchant.address else []
    lines += filter(None, [context["tax_identifier"], context["registration_number"]])
    lines += filter(None, [merchant.phone, merchant.support_email])
    return "\n".join(lines)
