"""A receipt as an Open Receipt Format 0.1 document (openreceiptformat/orf-spec,
schema/orf-0.1.json, public domain): what getReceipt answers with ``"format": "orf"`` and
the receipt page offers as a download.

Amounts are in major units by the currency's exponent (130000 NGN -> 1300.0; JPY has none),
tax rates are fractions (7.5 % -> 0.075), the merchant is named by its legal identity.
A refund's tax lines are its share of its sale's, and its payment the sale's card, which
the money goes back to. What ORF has no field for (the short code, the title, subtotal,
discount, tip, the receipt's number, the last digits of the card, the refunds and the items they gave back) is
kept under ``extensions.receco``.
"""

from merchants.models import Merchant
from receipts.documents import refund_share, refunded_items, title
from receipts.models import Receipt
from receipts.money import currency_info
from receipts.representation import iso_utc

ORF_VERSION = "0.1.0"
EXTENSION = "receco"
# ORF 0.1 has no field for a company registration number: it is one of the merchant's
# identifiers, by a scheme named as tax schemes are (NG_TIN).
REGISTRATION_SCHEME = "NG_CAC"


def document(receipt: Receipt, merchant: Merchant) -> dict:
    """The ORF document of ``receipt``, issued by ``merchant`` (its record as it is now)."""
    digits = currency_info(receipt.currency).digits

    def major(minor: int | None):
        if minor is None:
            return None
        return minor if digits == 0 else minor / 10**digits

    details = receipt.details or {}
    tax_lines = details.get("tax_lines") or []
    payment = details.get("payment_details") or {}
    if receipt.refund_of_id:
        share = refund_share(receipt, receipt.refund_of)
        tax_lines, payment = share.tax_lines, share.payment_details or {}
    doc = {
        "orf_version": ORF_VERSION,
        "receipt": {
            "receipt_id": receipt.token,
            "issue_timestamp": iso_utc(receipt.transaction_date),
            "receipt_type": receipt.receipt_type,
            "status": "voided" if receipt.status == "voided" else "issued",
        },
        "merchant": _merchant(merchant, receipt),
        "line_items": [
            {
                "line_item_id": item.get("sku") or str(position),
                "description": item["name"],
                "quantity": item["quantity"],
                "unit_price": major(item["unit_price"]),
                "line_total": major(item["total_price"]),
            }
            for position, item in enumerate(receipt.items, start=1)
        ],
        "total": major(receipt.total_amount),
        "currency": receipt.currency,
    }
    if tax_lines:
        doc["tax"] = {
            "tax_lines": [
                {
                    "rate": round(line["rate"] / 100, 6),
                    "base_amount": major(line["taxable_amount"]),
                    "tax_amount": major(line["tax_amount"]),
                    "jurisdiction": merchant.country,
                }
                for line in tax_lines
            ]
        }
        names = {line["name"] for line in tax_lines}
        if len(names) == 1:
            doc["tax"]["tax_scheme"] = names.pop()
    if receipt.payment_method or payment.get("card_brand") or payment.get("authorization_code"):
        doc["payment"] = {
            name: value
            for name, value in (
                ("payment_method", receipt.payment_method),
                ("provider", payment.get("card_brand")),
                ("authorization_code", payment.get("authorization_code")),
            )
            if value
        }
    doc["extensions"] = {
        EXTENSION: {
            "token": receipt.token,
            "short_code": receipt.short_code,
            "receipt_number": receipt.receipt_number,
            "status": receipt.status,
            "title": title(receipt),
            "livemode": receipt.livemode,
            "receipt_url": receipt.public_url,
            "subtotal": major(details.get("subtotal_amount")),
            "discount": major(details.get("discount_amount")),
            "tip": major(details.get("tip_amount")),
            "tax_lines_inclusive": [bool(line["inclusive"]) for line in tax_lines],
            "card_last4": payment.get("card_last4"),
            "refund_of": details.get("refund_of"),
            "refunds": [{**entry, "amount": major(entry["amount"])} for entry in details.get("refunds", [])],
            "refunded_items": refunded_items(receipt),
        }
    }
    return doc


def _merchant(merchant: Merchant, receipt: Receipt) -> dict:
    found = {
        "merchant_id": merchant.string_id,
        "legal_name": merchant.legal_name or merchant.name,
        "display_name": receipt.merchant_name,
        "country_code": merchant.country,
    }
    identifiers = []
    if merchant.tax_identifier:
        scheme, value = merchant.tax_identifier
        identifiers.append({"scheme": scheme, "value": value})
    if merchant.registration_number:
        identifiers.append({"scheme": REGISTRATION_SCHEME, "value": merchant.registration_number})
    if identifiers:
        found["tax_identifiers"] = identifiers
    return found
