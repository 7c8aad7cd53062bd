"""A receipt as an Open Receipt Format 0.1 document (openreceiptformat/orf-spec,
schema/orf-0.1.json, public domain): what getReceipt answers with ``"format": "orf"`` and
the receipt page offers as a download.

Every field that the receipt's signed content states is written from that content by
receco_verify.orf.written, the rule both verifiers hold a saved file to (a file whose
total, items, tax lines, dates or numbers were changed fails): amounts in major units by
the currency's exponent (130000 NGN -> 1300.0; JPY has none), tax rates as fractions
(7.5 % -> 0.075). A refund's tax lines are its share of its sale's, and its payment the
sale's card, which the money goes back to (receipts.rendering.documents; signed from content version
3). What the content does not state comes from the rows as they are now: the merchant
named by its legal identity, the receipt's status, title, link and refunds. What ORF has
no field for (the short code, the title, subtotal, discount, tip, the receipt's number,
the last digits of the card, the refunds and the items they gave back) is kept under
``extensions.receco``. What is shown beside the receipt once issued (its e-invoice's IRN
and NRS QR code: receipts.annexes) has an extension of its own, ``extensions.nrs``, outside
the signed content and unchecked by the verifiers.
"""

from receco_verify.money import major
from receco_verify.orf import written

from merchants.models import Merchant
from receipts import annexes
from receipts.models import Receipt
from receipts.rendering.documents import refunded_items, title
from receipts.signing import receipt_content

ORF_VERSION = "0.1.0"
EXTENSION = "receco"
# ORF 0.1 has no field for a company registration number: it is one of the merchant's
# identifiers, by a scheme named as tax schemes are (NG_TIN).
REGISTRATION_SCHEME = "NG_CAC"


def document(receipt: Receipt, merchant: Merchant) -> dict:
    """The ORF document of ``receipt``, issued by ``merchant`` (its record as it is now)."""
    stated = written(receipt_content(receipt, merchant.string_id, kid=""))
    signed = stated["extensions"][EXTENSION]
    doc = {
        "orf_version": ORF_VERSION,
        "receipt": {**stated["receipt"], "status": "voided" if receipt.status == "voided" else "issued"},
        "merchant": _merchant(merchant, stated["merchant"]),
        "line_items": stated["line_items"],
        "total": stated["total"],
        "currency": stated["currency"],
    }
    if "tax" in stated:
        lines = [{**line, "jurisdiction": merchant.country} for line in stated["tax"]["tax_lines"]]
        doc["tax"] = {**stated["tax"], "tax_lines": lines}
    if "payment" in stated:
        doc["payment"] = stated["payment"]
    doc["extensions"] = {
        EXTENSION: {
            "token": signed["token"],
            "short_code": signed["short_code"],
            "receipt_number": signed["receipt_number"],
            "status": receipt.status,
            "title": title(receipt),
            "livemode": signed["livemode"],
            "receipt_url": receipt.public_url,
            # The shop's time zone, in which its pages show the receipt's times (verify.js too).
            "time_zone": merchant.time_zone,
            "subtotal": signed["subtotal"],
            "discount": signed["discount"],
            "tip": signed["tip"],
            "tax_lines_inclusive": signed["tax_lines_inclusive"],
            "card_last4": signed["card_last4"],
            "refund_of": signed["refund_of"],
            "refunds": [
                {**entry, "amount": major(entry["amount"], receipt.currency)} for entry in receipt.detail("refunds", [])
            ],
            # A refund's are signed; a sale's, its refunds so far, change.
            "refunded_items": signed["refunded_items"] if receipt.refund_of_id else refunded_items(receipt),
        }
    }
    for annex in annexes.of(receipt):
        doc["extensions"][annex.name] = annex.extension
    return doc


def _merchant(merchant: Merchant, stated: dict) -> dict:
    found = {
        "merchant_id": stated["merchant_id"],
        "legal_name": merchant.legal_name or merchant.name,
        "display_name": stated["display_name"],
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
