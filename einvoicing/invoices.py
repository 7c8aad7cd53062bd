"""What is reported to NRS of a receipt, in the service's own terms (minor units, its own
names): the supplier, as the merchant's legal identity states it, and the invoice of a
sale or the credit note of a refund. einvoicing.mbs writes it as NRS reads it.

Nothing of the customer is reported: a receipt is a sale to a consumer (B2C), whose
invoice NRS takes without a buyer (docs/einvoicing.md, "What is sent").
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime

import phonenumbers

from einvoicing.models import EInvoicing, Report
from merchants.models import Merchant
from receipts.models import Receipt
from receipts.rendering.documents import refund_share

# What the shop must fill in, by what is missing (Shop details › Legal identity).
MISSING = {
    "tax_id": "its tax identifier (TIN)",
    "support_email": "its support email",
    "address": "its address",
}


class Incomplete(ValueError):
    """The receipt cannot be reported as it stands; the message says what the shop must do."""


@dataclass(frozen=True)
class Supplier:
    name: str
    tin: str
    email: str
    telephone: str | None  # E.164, or None when the shop's number is not one
    street: str
    city: str
    postal_zone: str
    country: str


@dataclass(frozen=True)
class Line:
    name: str
    quantity: int
    unit_price: int
    total: int
    sku: str | None


@dataclass(frozen=True)
class Tax:
    name: str
    rate: float  # percent
    taxable: int
    amount: int


@dataclass(frozen=True)
class Invoice:
    """A sale's invoice or a refund's credit note, amounts in minor units of ``currency``."""

    irn: str
    credit_note: bool
    currency: str
    issued: datetime  # in the merchant's time zone
    lines: list[Line]
    taxes: list[Tax]
    discount: int  # an allowance on the whole
    tip: int  # a charge on the whole
    total: int  # what was paid (or given back)
    payment_method: str | None
    billing: list[tuple[str, date]]  # a credit note's invoice: its IRN and issue date


def supplier(merchant: Merchant, settings: EInvoicing) -> Supplier:
    """The supplier, as the merchant's legal identity and its e-invoicing settings state it.
    Raises Incomplete naming what the shop has not filled in."""
    missing = [label for field, label in MISSING.items() if not getattr(merchant, field).strip()]
    if missing:
        raise Incomplete(f"Shop details lack {', '.join(missing)}: fill them in, then report the day again")
    street = ", ".join(line.strip() for line in merchant.address.splitlines() if line.strip())
    return Supplier(
        name=merchant.legal_name or merchant.name,
        tin=merchant.tax_id.strip(),
        email=merchant.support_email,
        telephone=_e164(merchant.phone, merchant.country),
        street=street,
        city=settings.city,
        postal_zone=settings.postal_zone,
        country=merchant.country,
    )


def _e164(number: str, country: str) -> str | None:
    try:
        parsed = phonenumbers.parse(number, country)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(parsed):
        return None
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def issued(receipt: Receipt, zone: str) -> datetime:
    """When ``receipt`` was issued, in the time zone ``zone``: the date of its IRN."""
    return receipt.transaction_date.astimezone(zoneinfo.ZoneInfo(zone))


def invoice(report: Report, receipt: Receipt, zone: str, sale_report: Report | None = None) -> Invoice:
    """The invoice of ``report`` (a sale's), or its credit note (a refund's, with the report
    of its sale's invoice, ``sale_report``: what it refers to)."""
    credit_note = report.document == Report.Document.CREDIT_NOTE
    details = receipt.details or {}
    if credit_note:
        sale = receipt.refund_of
        taxes = refund_share(receipt, sale).tax_lines
        billing = [(sale_report.irn, issued(sale, zone).date())]
        discount = tip = 0
    else:
        taxes = details.get("tax_lines") or []
        billing = []
        discount, tip = details.get("discount_amount") or 0, details.get("tip_amount") or 0
    return Invoice(
        irn=report.irn,
        credit_note=credit_note,
        currency=receipt.currency,
        issued=issued(receipt, zone),
        lines=[
            Line(item["name"], item["quantity"], item["unit_price"], item["total_price"], item.get("sku"))
            for item in receipt.items
        ],
        taxes=[Tax(tax["name"], tax["rate"], tax["taxable_amount"], tax["tax_amount"]) for tax in taxes],
        discount=discount,
        tip=tip,
        total=receipt.total_amount,
        payment_method=receipt.payment_method,
        billing=billing,
    )
