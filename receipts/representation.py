"""A receipt as plain data, the shape getReceipt answers (docs/api.md, "getReceipt")."""

from datetime import UTC, datetime

from receipts.contacts import mask_email, mask_phone
from receipts.documents import refund_share
from receipts.models import Receipt


def iso_utc(moment: datetime) -> str:
    """``2026-11-22T10:15:00.000Z``: UTC, milliseconds, a Z suffix."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"  # drops "+00:00"


def receipt_data(receipt: Receipt, *, reveal_contact: bool = False) -> dict:
    """Return every field of a receipt, the first 19 those every client knows, then its
    breakdown, payment and refunds (docs/api.md, "getReceipt"): all from its own row, but
    for a refund, whose tax lines and card are its share of its sale's (one more
    query). Contact data is masked unless ``reveal_contact``."""
    email, phone = receipt.customer_email, receipt.customer_phone
    if not reveal_contact:
        email, phone = mask_email(email), mask_phone(phone)
    details = receipt.details or _NONE
    payment = details.get("payment_details")
    tax_lines = details.get("tax_lines", [])
    if receipt.refund_of_id:
        share = refund_share(receipt, receipt.refund_of)
        tax_lines, payment = share.tax_lines, share.payment_details
    return {
        "id": receipt.pk,
        "token": receipt.token,
        "short_code": receipt.short_code,
        "merchant_id": receipt.merchant_id,
        "merchant_name": receipt.merchant_name,
        "merchant_logo": receipt.merchant_logo,
        "accent_color": receipt.accent_color,
        "total_amount": receipt.total_amount,
        "currency": receipt.currency,
        "transaction_date": iso_utc(receipt.transaction_date),
        "items": receipt.items,
        "category": receipt.category,
        "payment_method": receipt.payment_method,
        "location": receipt.location,
        "status": receipt.status,
        "customer_email": email,
        "customer_phone": phone,
        "created_at": iso_utc(receipt.created_at),
        "updated_at": iso_utc(receipt.updated_at),
        "subtotal_amount": details.get("subtotal_amount"),
        "discount_amount": details.get("discount_amount"),
        "tip_amount": details.get("tip_amount"),
        "tax_lines": tax_lines,
        "payment_details": {name: payment.get(name) for name in PAYMENT_DETAILS} if payment else None,
        "receipt_type": receipt.receipt_type,
        "refund_of": details.get("refund_of"),
        "refunds": details.get("refunds", []),
    }


_NONE: dict = {}
PAYMENT_DETAILS = ("card_brand", "card_last4", "authorization_code")
