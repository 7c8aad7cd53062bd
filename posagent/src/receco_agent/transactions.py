"""The POS's transaction: validation of the camelCase body and its mapping to the
service's snake_case createReceiptFromPOS input.

The bounds are the service's own (service_rules), so that a sale the service would refuse
is refused at the till, not discovered later in the queue."""

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from receco_agent import service_rules
from receco_agent.service_rules import ITEM, PAYMENT_DETAILS, PHONE_CHANNELS, SALE, TAX_LINE, text_problem

MAX_BODY_BYTES = 1024 * 1024  # of a POS request to the agent
MAX_ITEMS = SALE["items"][1]
MAX_AMOUNT = service_rules.MAX_AMOUNT
MAX_QUANTITY = ITEM["quantity"][2]
MAX_TAX_LINES = SALE["tax_lines"][1]
MAX_KEY_LENGTH = 200  # an Idempotency-Key or transactionId
# How deep arrays and objects may nest in a request: the service's input nests 3 deep, and
# deeper structures would make the checks below recurse without bound.
MAX_DEPTH = 64
MERCHANT_ID = re.compile(service_rules.MERCHANT_ID_PATTERN)
_CARD_NUMBER = re.compile(service_rules.CARD_NUMBER_PATTERN)
_TERMINAL_CODE = re.compile(service_rules.TERMINAL_CODE_PATTERN)
_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_CURRENCY = re.compile(r"[A-Za-z]{3}")
# camelCase field -> (snake_case service field or None when kept local, longest length)
_OPTIONAL_STRINGS = {
    "merchantName": ("merchant_name", SALE["merchant_name"][1]),
    "merchantLogo": ("merchant_logo", SALE["merchant_logo"][1]),
    "accentColor": ("accent_color", SALE["accent_color"][1]),
    "currency": ("currency", SALE["currency"][1]),
    "paymentMethod": ("payment_method", SALE["payment_method"][1]),
    "location": ("location", SALE["location"][1]),
    # The customer's contact, to be sent the receipt, and how at the number: "sms"
    # (absent) or "whatsapp" (the customer's choice at the till, their opt-in).
    "customerEmail": ("customer_email", SALE["customer_email"][1]),
    "customerPhone": ("customer_phone", SALE["customer_phone"][1]),
    "customerPhoneChannel": ("customer_phone_channel", max(map(len, SALE["customer_phone_channel"][1]))),
    "timestamp": (None, 40),
    "cashierId": (None, 100),
    "terminalId": (None, 100),
}


class InvalidTransaction(ValueError):
    """The POS sent something that is not a valid transaction; the message says what."""


@dataclass
class Transaction:
    """A validated POS transaction."""

    merchant_id: str
    items: list[dict]
    total_amount: int
    strings: dict[str, str] = field(default_factory=dict)
    transaction_id: str | None = None  # the POS's own id of the sale: its retries share it
    breakdown: dict = field(default_factory=dict)  # subtotal, discount, tip, tax lines, card: service names

    @property
    def local_fields(self) -> dict:
        """Fields kept only in the local queue: the service's schema has no place for them."""
        return {k: self.strings[k] for k in ("cashierId", "terminalId") if k in self.strings}


def decode_json(body: bytes) -> object:
    """Return the JSON value of a raw request body; raise InvalidTransaction naming what is
    wrong (not JSON, nested too deep, a number too long to read)."""
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidTransaction("Request body is not valid JSON") from None
    except RecursionError:
        raise InvalidTransaction(f"Request body nests arrays and objects more than {MAX_DEPTH} deep") from None
    except ValueError:  # an integer longer than Python reads (4300 digits by default)
        raise InvalidTransaction(
            f"Request body holds a number of more than {sys.get_int_max_str_digits()} digits; "
            "amounts are integers in minor units"
        ) from None


def request_digest(document: object) -> str:
    """Return a digest of a decoded request, the same for the same request however its JSON
    was spaced or its keys ordered: a retry's is its first request's."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_body(body: bytes) -> Transaction:
    """Return the Transaction in a raw request body; raise InvalidTransaction if it is not one."""
    return validate(decode_json(body))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(value: object) -> bool:
    return _is_int(value) and 0 <= value <= MAX_AMOUNT


def _item(index: int, raw: object) -> dict:
    where = f"items[{index}]"
    if not isinstance(raw, dict):
        raise InvalidTransaction(f"{where} must be an object")
    name = raw.get("name")
    longest = ITEM["name"][1]
    if not isinstance(name, str) or not name.strip() or len(name) > longest:
        raise InvalidTransaction(f"{where}.name is required and must be a string of 1 to {longest} characters")
    quantity = raw.get("quantity")
    if not _is_int(quantity) or not 1 <= quantity <= MAX_QUANTITY:
        raise InvalidTransaction(f"{where}.quantity must be an integer from 1 to {MAX_QUANTITY}")
    unit_price = raw.get("unitPrice")
    if not _amount(unit_price):
        raise InvalidTransaction(f"{where}.unitPrice must be an integer >= 0 (minor currency units)")
    total_price = raw.get("totalPrice", quantity * unit_price)
    if not _amount(total_price):
        raise InvalidTransaction(f"{where}.totalPrice must be an integer >= 0 (minor currency units)")
    item = {"name": name, "quantity": quantity, "unit_price": unit_price, "total_price": total_price}
    sku = raw.get("sku")
    if sku is not None and sku != "":
        if not isinstance(sku, str) or len(sku) > ITEM["sku"][1]:
            raise InvalidTransaction(f"{where}.sku must be a string of at most {ITEM['sku'][1]} characters")
        item["sku"] = sku
    return item


def _check_string(key: str, value: str) -> None:
    if key == "accentColor" and not _COLOR.fullmatch(value):
        raise InvalidTransaction("accentColor must be a hex colour such as #1a2b3c")
    if key == "currency" and not _CURRENCY.fullmatch(value):
        raise InvalidTransaction("currency must be a 3-letter code such as NGN")
    if key == "merchantLogo" and not _is_web_url(value):
        raise InvalidTransaction("merchantLogo must be an http:// or https:// URL")
    if key == "timestamp":
        parse_timestamp(value)


def _is_web_url(value: str) -> bool:
    """Whether ``value`` is a whole http(s) URL with a host (and a port, if any, that is one)."""
    if any(c.isspace() for c in value):
        return False
    try:  # urlsplit refuses e.g. "http://[::1" (an unclosed IPv6 address); .port a port out of range
        parts = urlsplit(value)
        parts.port  # noqa: B018
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def parse_timestamp(value: str) -> datetime:
    """Return the aware UTC datetime of an ISO 8601 timestamp (UTC when it has no offset)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidTransaction("timestamp must be an ISO 8601 date and time such as 2026-11-22T10:15:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# What the agent can tell of a contact without the service's rules (it has no phone
# number data): a number is digits, with a "+" and spacing; an address has an "@" and a
# dot after it. The service checks each fully, and refuses the sale for one it cannot read.
_PHONE = re.compile(r"\+?[0-9][0-9 ().-]{5,38}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _check_contact(key: str, value: str) -> None:
    if key == "customerPhone" and not _PHONE.fullmatch(value.strip()):
        raise InvalidTransaction("customerPhone must be a phone number, such as +2348031234567")
    if key == "customerEmail" and not _EMAIL.fullmatch(value.strip()):
        raise InvalidTransaction("customerEmail must be an email address")
    if key == "customerPhoneChannel" and value not in PHONE_CHANNELS:
        raise InvalidTransaction('customerPhoneChannel must be "sms" or "whatsapp"')


def validate(data: object) -> Transaction:
    """Return the Transaction of a decoded JSON value; raise InvalidTransaction if it is not one."""
    if not isinstance(data, dict):
        raise InvalidTransaction("Request body must be a JSON object")
    check_texts(data, "")
    missing = [k for k in ("merchantId", "items", "totalAmount") if data.get(k) is None]
    if missing:
        raise InvalidTransaction("Missing required field(s): " + ", ".join(missing))
    merchant_id = data["merchantId"]
    if not isinstance(merchant_id, str) or not MERCHANT_ID.fullmatch(merchant_id.strip()):
        raise InvalidTransaction(
            "merchantId must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    items = data["items"]
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        raise InvalidTransaction(f"items must be an array of 1 to {MAX_ITEMS} items")
    total = data["totalAmount"]
    if not _amount(total):
        raise InvalidTransaction("totalAmount must be an integer >= 0 (minor currency units)")
    strings = {}
    for key, (_, longest) in _OPTIONAL_STRINGS.items():
        value = data.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str) or len(value) > longest:
            raise InvalidTransaction(f"{key} must be a string of at most {longest} characters")
        _check_string(key, value)
        _check_contact(key, value)
        strings[key] = value.upper() if key == "currency" else value
    transaction_id = data.get("transactionId")
    if transaction_id is not None and (
        not isinstance(transaction_id, str) or not 1 <= len(transaction_id) <= MAX_KEY_LENGTH
    ):
        raise InvalidTransaction(f"transactionId must be a string of 1 to {MAX_KEY_LENGTH} characters")
    items_ = [_item(i, raw) for i, raw in enumerate(items)]
    breakdown = _breakdown(data)
    _check_sums(items_, total, breakdown)
    return Transaction(merchant_id.strip(), items_, total, strings, transaction_id or None, breakdown)


def check_texts(value: object, where: str) -> None:
    """Refuse NUL characters and lone surrogates anywhere, naming the field (as the service
    does), and arrays or objects nested more than MAX_DEPTH deep."""
    # A loop over a stack rather than recursion: the depth is what is being checked.
    stack: list[tuple[object, str, int]] = [(value, where, 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, dict | list) and depth >= MAX_DEPTH:
            raise InvalidTransaction(f"Request body nests arrays and objects more than {MAX_DEPTH} deep")
        if isinstance(value, dict):
            children = []
            for key, inner in value.items():
                path = f"{where}.{key}" if where else str(key)
                problem = text_problem(str(key))
                if problem:
                    raise InvalidTransaction(f"{path}: the field name {problem}")
                children.append((inner, path, depth + 1))
            stack.extend(reversed(children))  # in the document's order, as a recursion would
        elif isinstance(value, list):
            stack.extend((inner, f"{where}[{index}]", depth + 1) for index, inner in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            problem = text_problem(value)
            if problem:
                raise InvalidTransaction(f"{where} {problem}")


def _optional_amount(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not _amount(value):
        raise InvalidTransaction(f"{key} must be an integer >= 0 (minor currency units)")
    return value


def _tax_line(index: int, raw: object) -> dict:
    where = f"taxLines[{index}]"
    if not isinstance(raw, dict):
        raise InvalidTransaction(f"{where} must be an object")
    name, rate, inclusive = raw.get("name"), raw.get("rate"), raw.get("inclusive", False)
    longest = TAX_LINE["name"][1]
    if not isinstance(name, str) or not name.strip() or len(name) > longest:
        raise InvalidTransaction(f"{where}.name is required and must be a string of 1 to {longest} characters")
    low, high = TAX_LINE["rate"][1:]
    if type(rate) not in (int, float) or not low <= rate <= high:
        raise InvalidTransaction(f"{where}.rate must be a number from {low} to {high} (a percentage such as 7.5)")
    line = {"name": name, "rate": rate}
    for camel, snake in (("taxableAmount", "taxable_amount"), ("taxAmount", "tax_amount")):
        if not _amount(raw.get(camel)):
            raise InvalidTransaction(f"{where}.{camel} must be an integer >= 0 (minor currency units)")
        line[snake] = raw[camel]
    if type(inclusive) is not bool:
        raise InvalidTransaction(f"{where}.inclusive must be true or false")
    line["inclusive"] = inclusive
    return line


def _payment_details(raw: object) -> dict:
    if not isinstance(raw, dict):
        raise InvalidTransaction("paymentDetails must be an object")
    if _CARD_NUMBER.search(json.dumps(raw, ensure_ascii=False)):
        raise InvalidTransaction("paymentDetails must not hold a card number (12 or more digits in a row)")
    details = {}
    for camel, snake in (
        ("cardBrand", "card_brand"),
        ("cardLast4", "card_last4"),
        ("authorizationCode", "authorization_code"),
    ):
        value = raw.get(camel)
        if value is None or value == "":
            continue
        longest = PAYMENT_DETAILS[snake][1]
        if not isinstance(value, str) or len(value) > longest:
            raise InvalidTransaction(f"paymentDetails.{camel} must be a string of at most {longest} characters")
        details[snake] = value
    if "card_last4" in details and not re.fullmatch(r"[0-9]{4}", details["card_last4"]):
        raise InvalidTransaction("paymentDetails.cardLast4 must be the last 4 digits of the card")
    return details


def _breakdown(data: dict) -> dict:
    """The optional subtotal, discount, tip, tax lines and payment details, in the service's names."""
    breakdown: dict = {}
    for camel, snake in (
        ("subtotalAmount", "subtotal_amount"),
        ("discountAmount", "discount_amount"),
        ("tipAmount", "tip_amount"),
    ):
        value = _optional_amount(data, camel)
        if value is not None:
            breakdown[snake] = value
    lines = data.get("taxLines")
    if lines is not None:
        if not isinstance(lines, list) or len(lines) > MAX_TAX_LINES:
            raise InvalidTransaction(f"taxLines must be an array of at most {MAX_TAX_LINES} tax lines")
        if lines:
            breakdown["tax_lines"] = [_tax_line(i, raw) for i, raw in enumerate(lines)]
    if data.get("paymentDetails") is not None:
        details = _payment_details(data["paymentDetails"])
        if details:
            breakdown["payment_details"] = details
    return breakdown


def _check_sums(items: list[dict], total: int, breakdown: dict) -> None:
    # The service's rule (held to it by a test): a given subtotal is the items' sum, and
    # subtotal - discount + taxes not inclusive + tip is the total.
    subtotal = breakdown.get("subtotal_amount")
    if subtotal is None:
        return
    items_sum = sum(item["total_price"] for item in items)
    if subtotal != items_sum:
        raise InvalidTransaction(f"subtotalAmount must equal the sum of the items' totalPrice ({items_sum})")
    added_tax = sum(line["tax_amount"] for line in breakdown.get("tax_lines", ()) if not line["inclusive"])
    expected = subtotal - breakdown.get("discount_amount", 0) + added_tax + breakdown.get("tip_amount", 0)
    if total != expected:
        raise InvalidTransaction(
            "totalAmount must equal subtotalAmount - discountAmount + the taxAmount of the taxLines that are not "
            f"inclusive + tipAmount ({expected})"
        )


def iso_utc(moment: datetime) -> str:
    """Return ``moment`` as ISO 8601 UTC with milliseconds and Z, as the service answers."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_service_input(tx: Transaction, token: str, short_code: str, now: datetime) -> dict:
    """Return the createReceiptFromPOS input (snake_case) of a transaction.

    Absent optional fields are left out, so the service applies its own defaults.
    """
    payload = {
        "token": token,
        "short_code": short_code,
        "merchant_string_id": tx.merchant_id,
    }
    for key, (service_key, _) in _OPTIONAL_STRINGS.items():
        if service_key and key in tx.strings:
            payload[service_key] = tx.strings[key]
    payload["total_amount"] = tx.total_amount
    moment = parse_timestamp(tx.strings["timestamp"]) if "timestamp" in tx.strings else now
    payload["transaction_date"] = iso_utc(moment)
    payload["items"] = tx.items
    payload["status"] = "completed"
    payload.update(tx.breakdown)
    terminal_id = service_terminal_id(tx.strings.get("terminalId"))
    if terminal_id is not None:
        payload["terminal_id"] = terminal_id
    return payload


def service_terminal_id(terminal_id: str | None) -> str | None:
    """The POS's terminalId as the service's terminal_id, which numbers the sale in its
    till's own series; None (the sale is numbered in its merchant's series, and the
    terminalId stays in the local queue only) for one the service could not number by:
    longer than its terminal_id, or without a letter or digit."""
    value = (terminal_id or "").strip()
    if not value or len(value) > SALE["terminal_id"][1] or not _TERMINAL_CODE.search(value):
        return None
    return value
