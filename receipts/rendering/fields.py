"""The fields of a receipt as getReceipt answers it, declared once: each one's name, its
JSON Schema (type and description) and where its value comes from.

receipts.rendering.representation builds the answer from this list, and the OpenAPI document
describes the answer from it (agentapi.openapi.outputs): a field added here is answered
and documented, in this order. The first 19 are the specification's, which every
client knows; the rest follow them.
"""

from dataclasses import dataclass

from receipts.codes import SHORT_CODE_PATTERN
from receipts.rendering.documents import RECEIPT, REFUND_RECEIPT, VAT_RECEIPT, VOIDED

Schema = dict

# Where a field's value comes from.
COLUMN = "column"  # the receipt's attribute, as it is
MOMENT = "moment"  # a datetime attribute, as ISO 8601 UTC with milliseconds
CONTACT = "contact"  # personal data: masked unless the caller holds the merchant's key
DETAIL = "detail"  # an entry of Receipt.details: null when absent
DETAILS = "details"  # a list in Receipt.details: [] when absent
PAYMENT = "payment"  # the payment details in Receipt.details, their known entries only
TITLE = "title"  # what the document is, from what it holds (receipts.rendering.documents.title)
ISSUER = "issuer"  # the merchant's record as it is now: the identity the receipt states

DATE_TIME = {"type": "string", "format": "date-time", "description": "ISO 8601 UTC with milliseconds"}
AMOUNT = {"type": "integer", "minimum": 0, "description": "Minor units (kobo, cents)"}
TEXT_OR_NULL = {"type": ["string", "null"]}
AMOUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 0}


def closed(properties: dict, optional: tuple[str, ...] = (), **extra) -> Schema:
    """An object with exactly these properties, all required but ``optional``."""
    required = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False, **extra}


ITEM = closed(
    {
        "name": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1},
        "unit_price": AMOUNT,
        "total_price": AMOUNT,
        "sku": {"type": "string"},
    },
    optional=("sku",),
)
TAX_LINE = closed(
    {
        "name": {"type": "string"},
        "rate": {"type": "number", "description": "A percentage: 7.5"},
        "taxable_amount": AMOUNT,
        "tax_amount": AMOUNT,
        "inclusive": {"type": "boolean"},
    }
)
PAYMENT_DETAILS = ("card_brand", "card_last4", "authorization_code")
REFUND_ENTRY = closed(
    {"token": {"type": "string"}, "short_code": {"type": "string"}, "amount": AMOUNT, "created_at": DATE_TIME}
)


@dataclass(frozen=True)
class Field:
    """One field of getReceipt's answer: ``source`` says how its value is read, from the
    receipt's ``attribute`` (its name unless given) or its details' entry of that name."""

    name: str
    schema: Schema
    source: str = COLUMN
    attribute: str = ""

    @property
    def read_from(self) -> str:
        return self.attribute or self.name


RECEIPT_FIELDS = (
    Field("id", {"type": "integer"}, attribute="pk"),
    Field("token", {"type": "string"}),
    Field("short_code", {"type": "string", "pattern": f"^{SHORT_CODE_PATTERN}$"}),
    Field("merchant_id", {"type": "integer"}),
    Field("merchant_name", {"type": "string"}),
    Field("merchant_logo", TEXT_OR_NULL),
    Field("accent_color", {"type": "string", "pattern": "^#[0-9a-f]{6}$"}),
    Field("total_amount", AMOUNT),
    Field("currency", {"type": "string", "pattern": "^[A-Z]{3}$"}),
    Field("transaction_date", DATE_TIME, MOMENT),
    Field("items", {"type": "array", "items": ITEM}),
    Field("category", TEXT_OR_NULL),
    Field("payment_method", TEXT_OR_NULL),
    Field("location", TEXT_OR_NULL),
    Field(
        "status",
        {
            "type": "string",
            "description": "The POS's (completed unless it sent another), then partially_refunded, refunded or voided",
        },
    ),
    Field(
        "customer_email", {**TEXT_OR_NULL, "description": "Masked unless the caller holds the merchant's key"}, CONTACT
    ),
    Field(
        "customer_phone",
        {**TEXT_OR_NULL, "description": "E.164; masked unless the caller holds the merchant's key"},
        CONTACT,
    ),
    Field("created_at", DATE_TIME, MOMENT),
    Field("updated_at", DATE_TIME, MOMENT),
    # The breakdown, payment and refunds: Receipt.details, which most sales leave empty.
    Field("subtotal_amount", AMOUNT_OR_NULL, DETAIL),
    Field("discount_amount", AMOUNT_OR_NULL, DETAIL),
    Field("tip_amount", AMOUNT_OR_NULL, DETAIL),
    Field("tax_lines", {"type": "array", "items": TAX_LINE}, DETAILS),
    Field(
        "payment_details",
        {"oneOf": [closed(dict.fromkeys(PAYMENT_DETAILS, TEXT_OR_NULL)), {"type": "null"}]},
        PAYMENT,
    ),
    Field("receipt_type", {"enum": ["sale", "refund"]}),
    Field("refund_of", {**TEXT_OR_NULL, "description": "A refund's sale, by token"}, DETAIL),
    Field("refunds", {"type": "array", "items": REFUND_ENTRY}, DETAILS),
    # What a tax receipt states: its number and what it is.
    Field(
        "receipt_number",
        {
            **TEXT_OR_NULL,
            "description": "MP-2026-000123: the next number of its series (the merchant's, or its till's when the "
            "sale named one; TEST- first for a test receipt); null for receipts stored before numbering",
        },
    ),
    Field("title", {"enum": [RECEIPT, VAT_RECEIPT, REFUND_RECEIPT, VOIDED]}, TITLE),
    Field(
        "merchant_registration_number",
        {
            **TEXT_OR_NULL,
            "description": "The merchant's CAC registration number (RC1234567), as its record is now; null when it "
            "has none",
        },
        ISSUER,
        attribute="registration_number",
    ),
)
