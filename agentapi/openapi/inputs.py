"""What each procedure takes: the serializer its input is validated with, what the
document says of it, and an example.

createReceiptFromPOS, refundReceipt and voidReceipt validate their input with these very
serializers. getReceipt and updateReceiptContact read theirs by hand, on the fast path
of every read (agentapi.procedures); the two serializers below describe that reading,
and tests/agentapi/test_openapi_answers.py holds each to what the procedure answers.
"""

import re
from dataclasses import dataclass, field

from django.core.validators import RegexValidator
from rest_framework import serializers

from agentapi.procedures import FORMATS
from ledger.bundles import ENTRIES
from ledger.proofs import MAX_SIZE
from receipts.codes import SHORT_CODE_FORM, SHORT_CODE_PATTERN, TOKEN_FORM, TOKEN_PATTERN
from receipts.contacts import MAX_EMAIL_LENGTH, MAX_PHONE_LENGTH, PHONE_CHANNELS
from receipts.refunds import RefundSerializer, VoidSerializer
from receipts.validation import SaleSerializer, StrictCharField, StrictIntegerField

REFERENCE = f"A receipt's token ({TOKEN_FORM}) or its short code ({SHORT_CODE_FORM}, trimmed, any case)"
# What receipts.codes.parse_reference reads: a token or a short code in any case, with the
# ASCII whitespace str.strip() removes around it.
_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f ]*"
_SHORT_CODE = SHORT_CODE_PATTERN.replace("A-Z", "A-Za-z")
REFERENCE_RE = re.compile(f"^{_SPACE}({_SHORT_CODE}|{TOKEN_PATTERN}){_SPACE}$")


class ReceiptQuerySerializer(serializers.Serializer):
    """getReceipt's input."""

    token = StrictCharField(help_text=REFERENCE, validators=[RegexValidator(REFERENCE_RE)])
    format = serializers.ChoiceField(
        choices=[name for name in FORMATS if name],
        required=False,
        allow_null=True,
        help_text="orf: the receipt as an Open Receipt Format 0.1 document; absent or null: as it is",
    )


class ContactSerializer(serializers.Serializer):
    """updateReceiptContact's input: at least one of email and phone."""

    token = StrictCharField(help_text=REFERENCE, validators=[RegexValidator(REFERENCE_RE)])
    email = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=MAX_EMAIL_LENGTH,
        help_text="An address at a public domain; blank or null: none",
    )
    phone = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=MAX_PHONE_LENGTH,
        help_text="Stored in E.164; without a country code read in the service's region; blank or null: none",
    )
    phone_channel = serializers.ChoiceField(
        choices=list(PHONE_CHANNELS),
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="How the receipt goes to phone: sms (the default: absent, null or blank) or whatsapp, where "
        "the shop offers it (else 400). The customer's opt-in to WhatsApp is kept with the delivery. Ignored "
        "without phone",
    )


TREE_SIZE = "A checkpoint's tree size (entries); absent or null: the latest checkpoint"


class ProofQuerySerializer(serializers.Serializer):
    """getReceiptProof's input."""

    token = StrictCharField(help_text=REFERENCE, validators=[RegexValidator(REFERENCE_RE)])
    entry = serializers.ChoiceField(
        choices=list(ENTRIES),
        required=False,
        allow_null=True,
        help_text="receipt (absent or null): the receipt's own entry; void: its void's; set_aside: its latest "
        "set aside's",
    )
    tree_size = StrictIntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_SIZE, help_text=TREE_SIZE
    )


class CheckpointQuerySerializer(serializers.Serializer):
    """getLogCheckpoint's input (none at all is the latest checkpoint)."""

    tree_size = StrictIntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_SIZE, help_text=TREE_SIZE
    )


# "from" is a Python keyword: the fields are given by name.
ConsistencyQuerySerializer = type(
    "ConsistencyQuerySerializer",
    (serializers.Serializer,),
    {
        "__doc__": "getLogConsistency's input.",
        "from": StrictIntegerField(
            min_value=1, max_value=MAX_SIZE, help_text="The older tree size: a checkpoint the caller kept"
        ),
        "to": StrictIntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            max_value=MAX_SIZE,
            help_text="The newer tree size; absent or null: the latest",
        ),
    },
)


@dataclass(frozen=True)
class Input:
    serializer: type[serializers.Serializer]
    summary: str
    # {failed_lookups}, {anonymous}, {live_key}, {test_merchants}: that limit as the settings
    # say now (merchants.admission.limits), filled in when the document is built.
    description: str
    example: dict = field(default_factory=dict)
    conflicts: str = ""  # when the procedure answers 409 CONFLICT; empty: never


SALE_EXAMPLE = {
    "token": "rcpt_mfx3k2a1_q8z0lp",
    "short_code": "K7P2QX",
    "merchant_string_id": "test-mama-put",
    "merchant_name": "Mama Put Kitchen",
    "total_amount": 130000,
    "currency": "NGN",
    "transaction_date": "2026-11-22T10:15:00.000Z",
    "items": [
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
        {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
    ],
    "category": "restaurant",
    "payment_method": "card",
    "location": "Lekki Phase 1",
    "status": "completed",
}

INPUTS: dict[str, Input] = {
    "createReceiptFromPOS": Input(
        SaleSerializer,
        "Store a sale as a receipt",
        "Stores the sale and answers its token, short code and page. The token is the idempotency key: the "
        "same token with the same content answers the first receipt again, with different content 409. "
        "A merchant_string_id starting with test- is created on first use as a test merchant. Amounts are "
        "integers in minor units (kobo, cents); when subtotal_amount is given the breakdown must add up. "
        "Optional fields may be null; unknown fields are ignored; integers sent as strings are refused.",
        SALE_EXAMPLE,
        "The token was already used for a different receipt",
    ),
    "getReceipt": Input(
        ReceiptQuerySerializer,
        "Read a receipt",
        "Answers the receipt a token or short code names. Contact data is masked unless the caller holds "
        "the merchant's key. Short codes that find nothing count against the client address "
        "({failed_lookups}).",
        {"token": "K7P2QX"},
    ),
    "updateReceiptContact": Input(
        ContactSerializer,
        "Attach the customer's contact and send the receipt there",
        "Stores the email address and/or phone number on the receipt and sends it there as far as the daily "
        "limits allow; deliveries says what became of each. Anyone may call it without a key.",
        {"token": "K7P2QX", "email": "customer@example.com"},
    ),
    "refundReceipt": Input(
        RefundSerializer,
        "Refund a sale, whole or in part",
        "Makes a refund receipt linked to the sale: for what remains, an amount, or items by their place in the "
        "sale's items. refund_token is the idempotency key. Needs the merchant's key, except on test- merchants.",
        {"token": "K7P2QX", "items": [{"index": 1, "quantity": 1}], "reason": "Warm drink"},
        "More than remains, a voided sale, a refund of a refund, or the refund_token used for another refund",
    ),
    "voidReceipt": Input(
        VoidSerializer,
        "Void a sale that has no refunds",
        "The sale's status becomes voided; voiding it again answers the same. Needs the merchant's key, "
        "except on test- merchants.",
        {"token": "K7P2QX", "reason": "Rung up twice"},
        "The sale has refunds, or is itself a refund",
    ),
    "getReceiptProof": Input(
        ProofQuerySerializer,
        "Prove a receipt is in the signed log",
        "Answers the receipt's proof bundle: its signed content, the signature, its place in the log and the "
        "inclusion proof up to a signed checkpoint, which the standalone verifier (receco-verify) and anyone's "
        "own code can check offline with the keys of /.well-known/jwks.json. A receipt enters the log a few "
        "seconds after the sale: until then NOT_FOUND with Retry-After. Read as getReceipt reads a receipt: "
        "short codes that find nothing count against the client address ({failed_lookups}).",
        {"token": "K7P2QX"},
    ),
    "getLogCheckpoint": Input(
        CheckpointQuerySerializer,
        "Read the log's latest signed checkpoint",
        "Answers the latest checkpoint (or the one of tree_size): its size, root hash and the signed note "
        "(C2SP tlog-checkpoint) to keep, so that a later checkpoint can be proved to extend it.",
        {},
    ),
    "getLogConsistency": Input(
        ConsistencyQuerySerializer,
        "Prove the log only grew between two checkpoints",
        "Answers the RFC 9162 consistency proof from the tree of from entries to that of to (the latest by "
        "default): with the two roots it proves that nothing logged before was changed or removed.",
        {"from": 1},
    ),
}

# What the document says of fields whose serializers carry no help text: rules that a
# serializer's validate_<field> method checks, and units. The bounds come from the fields.
NOTES: dict[str, dict[str, str]] = {
    "createReceiptFromPOS": {
        "token": f"{TOKEN_FORM}; generated when absent. The idempotency key",
        "short_code": f"{SHORT_CODE_FORM}; generated when absent, replaced when another receipt holds it",
        "merchant_string_id": "An existing merchant, or any id starting with test- (a test merchant, made on first "
        "use)",
        "merchant_name": "Shown only for test- merchants",
        "merchant_logo": "An http(s) URL; shown only for test- merchants",
        "accent_color": "#rgb or #rrggbb; shown only for test- merchants",
        "total_amount": "Minor units (kobo, cents)",
        "currency": "ISO 4217, 3 letters; default NGN",
        "transaction_date": "ISO 8601 (UTC without an offset), from 2000-01-01 to one day from now; default now",
        "items[].unit_price": "Minor units",
        "items[].total_price": "Minor units",
        "status": "Default completed",
        "customer_email": "The receipt is sent there (as updateReceiptContact)",
        "customer_phone": "The receipt is sent there (as updateReceiptContact)",
        "customer_phone_channel": "sms (the default) or whatsapp: how the receipt goes to customer_phone, as the "
        "customer chose at the till. whatsapp where the shop does not offer it is sent by SMS (deliveries says "
        "so). Ignored without customer_phone",
        "subtotal_amount": "Minor units; when given, the sum of the items' total_price, and subtotal - discount + "
        "the tax of the lines that are not inclusive + tip must equal total_amount",
        "tax_lines[].rate": "A percentage: 7.5",
        "tax_lines[].inclusive": "true when the tax is already inside the item prices",
        "payment_details": "12 or more digits in a row anywhere in it refuse the sale: no card numbers",
        "payment_details.card_last4": "Exactly 4 digits",
        "terminal_id": "The till: the receipt is numbered in its own series (MP-TILL3-2026-000045, its letters and "
        "digits in capitals), else in the merchant's (MP-2026-000123). Needs a letter or digit",
    },
    "refundReceipt": {
        "token": "The sale's token or short code",
        "refund_token": f"{TOKEN_FORM}; generated when absent. The idempotency key",
        "amount": "Minor units; not with items. With neither, all that remains is refunded",
        "items[].index": "The item's place in the sale's items, from 0",
        "reason": "Shown on the refund receipt",
    },
    "voidReceipt": {"token": "The sale's token or short code"},
}
