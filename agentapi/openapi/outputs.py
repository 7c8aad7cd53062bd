"""JSON Schemas of what each procedure answers inside ``{"result": {"data": ...}}``.

Every object lists all its fields as required and allows no others (except where a field
is sent only sometimes, such as ``deliveries``), so that a field added to an answer and
not here fails the tests that check real answers against these schemas
(tests/agentapi/test_openapi_answers.py).
"""

from receipts.delivery_limits import DUPLICATE, LIMITED, QUEUED

Schema = dict

DATE_TIME = {"type": "string", "format": "date-time", "description": "ISO 8601 UTC with milliseconds"}
AMOUNT = {"type": "integer", "minimum": 0, "description": "Minor units (kobo, cents)"}
TEXT_OR_NULL = {"type": ["string", "null"]}
AMOUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 0}


def closed(properties: dict, optional: tuple[str, ...] = (), **extra) -> Schema:
    """An object with exactly these properties, all required but ``optional``."""
    required = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False, **extra}


DELIVERY = closed(
    {
        "channel": {"enum": ["email", "sms"]},
        "destination": {"type": "string", "description": "Masked: c*******@example.com, +234*******89"},
        "status": {
            "enum": [QUEUED, DUPLICATE, LIMITED],
            "description": "queued: it will be sent; duplicate: sent to this contact in the last 10 minutes, "
            "not again; limited: a daily limit refused it (message says which)",
        },
        "message": {"type": "string"},
    },
    optional=("message",),
)
DELIVERIES = {"type": "array", "items": {"$ref": "#/components/schemas/Delivery"}}

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
PAYMENT_DETAILS = closed({"card_brand": TEXT_OR_NULL, "card_last4": TEXT_OR_NULL, "authorization_code": TEXT_OR_NULL})
REFUND_ENTRY = closed(
    {"token": {"type": "string"}, "short_code": {"type": "string"}, "amount": AMOUNT, "created_at": DATE_TIME}
)

RECEIPT = closed(
    {
        "id": {"type": "integer"},
        "token": {"type": "string"},
        "short_code": {"type": "string", "pattern": "^[A-Z0-9]{6}$"},
        "merchant_id": {"type": "integer"},
        "merchant_name": {"type": "string"},
        "merchant_logo": TEXT_OR_NULL,
        "accent_color": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
        "total_amount": AMOUNT,
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "transaction_date": DATE_TIME,
        "items": {"type": "array", "items": ITEM},
        "category": TEXT_OR_NULL,
        "payment_method": TEXT_OR_NULL,
        "location": TEXT_OR_NULL,
        "status": {
            "type": "string",
            "description": "The POS's (completed unless it sent another), then partially_refunded, refunded or voided",
        },
        "customer_email": {**TEXT_OR_NULL, "description": "Masked unless the caller holds the merchant's key"},
        "customer_phone": {**TEXT_OR_NULL, "description": "E.164; masked unless the caller holds the merchant's key"},
        "created_at": DATE_TIME,
        "updated_at": DATE_TIME,
        "subtotal_amount": AMOUNT_OR_NULL,
        "discount_amount": AMOUNT_OR_NULL,
        "tip_amount": AMOUNT_OR_NULL,
        "tax_lines": {"type": "array", "items": TAX_LINE},
        "payment_details": {"oneOf": [PAYMENT_DETAILS, {"type": "null"}]},
        "receipt_type": {"enum": ["sale", "refund"]},
        "refund_of": {**TEXT_OR_NULL, "description": "A refund's sale, by token"},
        "refunds": {"type": "array", "items": REFUND_ENTRY},
    },
    description="The receipt, its first 19 fields those every client knows.",
)
# The Open Receipt Format 0.1 document getReceipt answers with "format": "orf" (its own
# schema is the format's; here only its outline, enough to tell it from a receipt).
ORF_DOCUMENT = {
    "type": "object",
    "description": "An Open Receipt Format 0.1 document (getReceipt with format orf)",
    "properties": {"orf_version": {"type": "string"}, "receipt": {"type": "object"}, "merchant": {"type": "object"}},
    "required": ["orf_version", "receipt", "merchant"],
}
CREATED = closed(
    {
        "id": {"type": "integer"},
        "token": {"type": "string"},
        "short_code": {"type": "string", "pattern": "^[A-Z0-9]{6}$"},
        "receipt_url": {"type": "string", "format": "uri"},
        "deliveries": DELIVERIES,
    },
    optional=("deliveries",),
)
REFUND = closed(
    {**CREATED["properties"], "amount": {**AMOUNT, "minimum": 1}},
    optional=("deliveries",),
)
CONTACT_UPDATED = closed({"success": {"const": True}, "deliveries": DELIVERIES})
VOIDED = closed(
    {
        "id": {"type": "integer"},
        "token": {"type": "string"},
        "short_code": {"type": "string"},
        "status": {"const": "voided"},
        "voided_at": DATE_TIME,
    }
)

# Named schemas (components/schemas) and, per procedure, the schema of its result's data.
SCHEMAS: dict[str, Schema] = {
    "Receipt": RECEIPT,
    "OrfDocument": ORF_DOCUMENT,
    "CreatedReceipt": CREATED,
    "ContactUpdated": CONTACT_UPDATED,
    "Refund": REFUND,
    "Voided": VOIDED,
    "Delivery": DELIVERY,
}
OUTPUTS: dict[str, Schema] = {
    "getReceipt": {"oneOf": [{"$ref": "#/components/schemas/Receipt"}, {"$ref": "#/components/schemas/OrfDocument"}]},
    "createReceiptFromPOS": {"$ref": "#/components/schemas/CreatedReceipt"},
    "updateReceiptContact": {"$ref": "#/components/schemas/ContactUpdated"},
    "refundReceipt": {"$ref": "#/components/schemas/Refund"},
    "voidReceipt": {"$ref": "#/components/schemas/Voided"},
}
