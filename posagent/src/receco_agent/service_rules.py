"""What the Receco service accepts in a createReceiptFromPOS input, as data.

The agent checks each sale against these rules before it answers the POS with a QR code,
so that a sale the service would refuse is refused at the till, not discovered hours later
in the queue. The agent cannot import the service (it runs without Django), so the rules
live here as plain data, and a test of the service's repository derives the same table from
its serializers and fails when the two differ: change one, and the test says to change the
other.

Each field: ``("text", max_length)``, ``("int", min, max)``, ``("number", min, max)``,
``("bool",)``, ``("choice", <the values>)`` (blank or absent: none),
``("list", max_items, <rules of an element>)`` or ``("object", <rules>)``.
Every string, however deep, is also refused when it holds a NUL character or a lone
surrogate, as the service's text fields refuse them.
"""

MAX_AMOUNT = 10**15
# How the receipt goes to customer_phone: the service takes exactly these (absent: sms).
PHONE_CHANNELS = ("sms", "whatsapp")
# The service's RECECO_MAX_BODY_BYTES unless its operator changed it: a sale whose input is
# larger once encoded is refused whole (413).
MAX_BODY_BYTES = 1024 * 1024
# 12 or more digits in a row (spaces or dashes between them included) anywhere in
# payment_details: a full card number, which the service refuses to store.
CARD_NUMBER_PATTERN = r"(?:\d[ -]?){11}\d"
MERCHANT_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
# A receipt's token, and its short code as the service reads it (any case).
TOKEN_PATTERN = r"[A-Za-z0-9_-]{8,64}"
SHORT_CODE_PATTERN = r"[A-Za-z0-9]{6}"

ITEM = {
    "name": ("text", 200),
    "quantity": ("int", 1, 1_000_000),
    "unit_price": ("int", 0, MAX_AMOUNT),
    "total_price": ("int", 0, MAX_AMOUNT),
    "sku": ("text", 64),
}
TAX_LINE = {
    "name": ("text", 100),
    "rate": ("number", 0, 100),
    "taxable_amount": ("int", 0, MAX_AMOUNT),
    "tax_amount": ("int", 0, MAX_AMOUNT),
    "inclusive": ("bool",),
}
PAYMENT_DETAILS = {
    "card_brand": ("text", 32),
    "card_last4": ("text", 4),
    "authorization_code": ("text", 64),
}
SALE = {
    "token": ("text", 64),
    "short_code": ("text", 6),
    "merchant_string_id": ("text", 64),
    "merchant_name": ("text", 200),
    "merchant_logo": ("text", 500),
    "accent_color": ("text", 7),
    "total_amount": ("int", 0, MAX_AMOUNT),
    "currency": ("text", 3),
    "transaction_date": ("text", 40),
    "items": ("list", 500, ("object", ITEM)),
    "category": ("text", 100),
    "payment_method": ("text", 50),
    "location": ("text", 200),
    "status": ("text", 32),
    "customer_email": ("text", 254),
    "customer_phone": ("text", 40),
    "customer_phone_channel": ("choice", PHONE_CHANNELS),
    "subtotal_amount": ("int", 0, MAX_AMOUNT),
    "discount_amount": ("int", 0, MAX_AMOUNT),
    "tip_amount": ("int", 0, MAX_AMOUNT),
    "tax_lines": ("list", 20, ("object", TAX_LINE)),
    "payment_details": ("object", PAYMENT_DETAILS),
    "terminal_id": ("text", 32),
}
# A terminal_id must also hold a letter or a digit: they name the till in the receipt number.
TERMINAL_CODE_PATTERN = r"[A-Za-z0-9]"


def text_problem(value: str) -> str | None:
    """Return why the service would refuse the string ``value`` whatever its field, or None."""
    if "\x00" in value:
        return "must not contain NUL characters"
    for char in value:
        if "\ud800" <= char <= "\udfff":
            return f"must not contain a lone surrogate (U+{ord(char):04X})"
    return None


REFUND_LINE = {
    "index": ("int", 0, 499),
    "quantity": ("int", 1, None),
}
REFUND = {
    "token": ("text", 64),
    "refund_token": ("text", 64),
    "amount": ("int", 1, MAX_AMOUNT),
    "items": ("list", None, ("object", REFUND_LINE)),
    "reason": ("text", 200),
}
