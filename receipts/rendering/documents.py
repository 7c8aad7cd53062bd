"""What a receipt is, as its title says, and what a refund gives back: its share of the
sale's tax lines and the card the money goes back to. Both are read from the receipts as
they are stored (a refund from its sale), the same for the page, the email, getReceipt
and the Open Receipt Format document."""

from dataclasses import dataclass

from receipts.models import Receipt

RECEIPT = "Receipt"
VAT_RECEIPT = "VAT receipt"
REFUND_RECEIPT = "Refund receipt"
VOIDED = "Voided"


def title(receipt: Receipt) -> str:
    """What the document is, from what it holds: ``Voided`` for a voided sale, ``Refund
    receipt`` for a refund, ``VAT receipt`` for a sale with tax lines, else ``Receipt``."""
    if receipt.status == "voided":
        return VOIDED
    if receipt.refund_of_id:
        return REFUND_RECEIPT
    if receipt.detail("tax_lines"):
        return VAT_RECEIPT
    return RECEIPT


@dataclass(frozen=True)
class RefundShare:
    """What a refund gives back of its sale's tax, and where the money goes."""

    # The sale's tax lines, each with the refund's share of its taxable and tax amounts
    # ({name, rate, taxable_amount, tax_amount, inclusive}, as a sale's).
    tax_lines: list[dict]
    # The sale's card: {card_brand, card_last4, authorization_code}, or None.
    payment_details: dict | None


def refund_share(refund: Receipt, sale: Receipt) -> RefundShare:
    """The share of ``sale``'s tax lines that ``refund`` gives back, pro rata to the refund
    as its amount is to the sale's total, and the card it goes back to.

    Each share is what all the sale's refunds up to this one give back, less what those
    before it gave, each rounded half up: the shares of a sale refunded whole add up to
    its tax to the kobo, as the refunds' amounts add up to its total."""
    before = 0
    for entry in sale.detail("refunds", []):
        if entry["token"] == refund.token:
            break
        before += entry["amount"]
    else:
        before = 0  # a replica that has not seen the refund on its sale yet: alone, then
    return _share(sale, before, refund.total_amount, itemised=bool(refund.detail("lines")))


def next_refund_share(sale: Receipt, amount: int, *, itemised: bool) -> RefundShare:
    """What a refund of ``amount`` not made yet (of items, if ``itemised``) would give
    back of ``sale``'s tax, after every refund the sale has had: the dashboard's
    confirmation, by the same rule as ``refund_share``."""
    before = sum(entry["amount"] for entry in sale.detail("refunds", []))
    return _share(sale, before, amount, itemised=itemised)


def _share(sale: Receipt, before: int, amount: int, *, itemised: bool) -> RefundShare:
    upto = before + amount
    total = sale.total_amount

    def share(value: int) -> int:
        if total <= 0:
            return 0
        return _half_up(value * upto, total) - _half_up(value * before, total)

    lines = [
        {
            "name": line["name"],
            "rate": line["rate"],
            "taxable_amount": share(line["taxable_amount"]),
            "tax_amount": share(line["tax_amount"]),
            # A refund of an amount gives it back whole, its tax inside; a refund of items
            # adds their share of the tax on top, as the sale did.
            "inclusive": bool(line["inclusive"]) or not itemised,
        }
        for line in sale.detail("tax_lines") or []
    ]
    payment = sale.detail("payment_details")
    return RefundShare(lines, dict(payment) if payment else None)


def refunded_items(receipt: Receipt) -> list[dict]:
    """The sale's items given back, ``{index, quantity}`` by their place in the sale: by
    all of a sale's refunds so far, or by this refund."""
    if receipt.refund_of_id:
        return [{"index": line["index"], "quantity": line["quantity"]} for line in receipt.detail("lines") or []]
    refunded = receipt.detail("refunded_lines") or {}
    return [{"index": int(index), "quantity": quantity} for index, quantity in refunded.items()]


def _half_up(numerator: int, denominator: int) -> int:
    return (numerator * 2 + denominator) // (2 * denominator)
