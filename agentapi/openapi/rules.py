"""What the procedures check of their input beyond each field's type and bounds, stated as
JSON Schema: the form of a token, a short code, a merchant id, a colour, a currency; a
refund of an amount or of items, not both; a contact needs an email address or a phone
number. With them the document is exactly as strict as the service, as schemathesis
checks it both ways (tests/agentapi/test_openapi_schemathesis.py).

DRF trims text before it checks it (agentapi.openapi.fields), so each form is allowed
surrounding whitespace where the serializer reads the field (sales, refunds, voids); the
procedures that read their input by hand have their forms on the serializers that
describe them (agentapi.openapi.inputs).

What no schema can say stays in the descriptions: an email address at a public domain, a
phone number that exists, a sale's date between 2000 and a day from now, sums that add up,
no card number in payment_details, a logo URL with a host, a proof between sizes the log
has.
"""

from agentapi.openapi.fields import SPACE
from merchants.models import string_id_validator
from receipts.codes import SHORT_CODE_PATTERN, TOKEN_PATTERN

_SHORT_CODE_ANY_CASE = SHORT_CODE_PATTERN.replace("A-Z", "A-Za-z")
# What receipts.codes.parse_reference reads, after the serializer trimmed it.
_REFERENCE = f"{_SHORT_CODE_ANY_CASE}|{TOKEN_PATTERN}"
_MERCHANT_ID = string_id_validator.regex.pattern.removeprefix("^").removesuffix("$")


def trimmed(form: str, *, optional: bool = True) -> str:
    """A pattern of text that, trimmed, is ``form`` (or blank, when ``optional``)."""
    return f"^{SPACE}*(?:{form}){'?' if optional else ''}{SPACE}*$"


# Per field (``items[].name``, ``payment_details.card_last4``): merged into its schema.
FIELDS: dict[str, dict[str, dict]] = {
    "createReceiptFromPOS": {
        "token": {"pattern": trimmed(TOKEN_PATTERN)},
        "short_code": {"pattern": trimmed(_SHORT_CODE_ANY_CASE)},
        "merchant_string_id": {"pattern": trimmed(_MERCHANT_ID, optional=False)},
        "accent_color": {"pattern": trimmed("#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})")},
        "currency": {"pattern": trimmed("[A-Za-z]{3}")},
        # receipts.numbering.terminal_code: a letter or digit to number the till's series by.
        "terminal_id": {"anyOf": [{"pattern": f"^{SPACE}*$"}, {"pattern": "[A-Za-z0-9]"}]},
        "payment_details.card_last4": {"pattern": trimmed("[0-9]{4}")},
    },
    "refundReceipt": {
        "token": {"pattern": trimmed(_REFERENCE, optional=False)},
        "refund_token": {"pattern": trimmed(TOKEN_PATTERN, optional=False)},  # null, not blank
    },
    "voidReceipt": {"token": {"pattern": trimmed(_REFERENCE, optional=False)}},
}

# Across fields: added to the input's schema.
ACROSS: dict[str, dict] = {
    # receipts.refunds.RefundSerializer.validate: an amount or items, not both (null is neither).
    "refundReceipt": {
        "not": {
            "required": ["amount", "items"],
            "properties": {"amount": {"type": "integer"}, "items": {"type": "array"}},
        }
    },
    # receipts.contacts.clean_contact: an email address or a phone number; null and blank
    # text are not given. Said as "not both absent, null or blank", which the generators of
    # clients leave aside (an anyOf of the two would make them two kinds of input).
    "updateReceiptContact": {
        "not": {
            "properties": {name: {"type": ["string", "null"], "pattern": f"^{SPACE}*$"} for name in ("email", "phone")}
        }
    },
}
