"""JSON Schemas of what each procedure answers inside ``{"result": {"data": ...}}``.

Every object lists all its fields as required and allows no others (except where a field
is sent only sometimes, such as ``deliveries``), so that a field added to an answer and
not here fails the tests that check real answers against these schemas
(tests/agentapi/test_openapi_answers.py).
"""

from messaging.limits import DUPLICATE, LIMITED, QUEUED
from messaging.models import EMAIL, SMS, WHATSAPP
from receipts.codes import SHORT_CODE_PATTERN
from receipts.rendering.fields import AMOUNT, DATE_TIME, RECEIPT_FIELDS, closed

Schema = dict

DELIVERY = closed(
    {
        # whatsapp only for a customer who chose it (phone_channel, customer_phone_channel)
        "channel": {"enum": [EMAIL, SMS, WHATSAPP]},
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

# The receipt's fields are declared once, with getReceipt's answer (receipts.rendering.fields).
RECEIPT = closed(
    {field.name: field.schema for field in RECEIPT_FIELDS},
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
        "short_code": {"type": "string", "pattern": f"^{SHORT_CODE_PATTERN}$"},
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

BASE64 = {"type": "string", "contentEncoding": "base64"}
PROOF = closed(
    {
        "content": {
            "type": "object",
            "description": 'What was signed: the receipt\'s fiscal content (docs/verification.md, "What is signed")',
        },
        "signature": {**BASE64, "description": "Ed25519 over the content's RFC 8785 canonical form"},
        "leaf_index": {"type": "integer", "minimum": 0},
        "tree_size": {"type": "integer", "minimum": 1},
        "inclusion": {"type": "array", "items": BASE64, "description": "The RFC 9162 inclusion proof"},
        "checkpoint": {"type": "string", "description": "The signed checkpoint of tree_size (a C2SP signed note)"},
    },
    description="A receipt's proof bundle, as /log/proof/<token> serves it and receco-verify checks it",
)
CHECKPOINT = closed(
    {
        "tree_size": {"type": "integer", "minimum": 1},
        "root": {**BASE64, "description": "The RFC 6962 root hash of the first tree_size entries"},
        "checkpoint": {"type": "string", "description": "The signed note (C2SP tlog-checkpoint)"},
        "published_at": DATE_TIME,
    }
)
CONSISTENCY = closed(
    {
        "from": {"type": "integer", "minimum": 1},
        "to": {"type": "integer", "minimum": 1},
        "proof": {"type": "array", "items": BASE64, "description": "The RFC 9162 consistency proof"},
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
    "ReceiptProof": PROOF,
    "LogCheckpoint": CHECKPOINT,
    "LogConsistency": CONSISTENCY,
}
OUTPUTS: dict[str, Schema] = {
    "getReceipt": {"oneOf": [{"$ref": "#/components/schemas/Receipt"}, {"$ref": "#/components/schemas/OrfDocument"}]},
    "createReceiptFromPOS": {"$ref": "#/components/schemas/CreatedReceipt"},
    "updateReceiptContact": {"$ref": "#/components/schemas/ContactUpdated"},
    "refundReceipt": {"$ref": "#/components/schemas/Refund"},
    "voidReceipt": {"$ref": "#/components/schemas/Voided"},
    "getReceiptProof": {"$ref": "#/components/schemas/ReceiptProof"},
    "getLogCheckpoint": {"$ref": "#/components/schemas/LogCheckpoint"},
    "getLogConsistency": {"$ref": "#/components/schemas/LogConsistency"},
}
