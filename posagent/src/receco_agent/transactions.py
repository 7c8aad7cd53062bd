"""The POS transaction of spec 2.4: validation of the camelCase body and its mapping to
the service's snake_case createReceiptFromPOS input.

The checks mirror the service's own (CONTRACT.md, createReceiptFromPOS), so that a sale
the service would refuse is refused at the till, not discovered later in the queue."""

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

MAX_BODY_BYTES = 1024 * 1024
# The service's documented bounds (README "Limits"): checked here so a queued sale is
# not refused hours later.
MAX_ITEMS = 500
MAX_AMOUNT = 10**15
MAX_QUANTITY = 1_000_000
MAX_KEY_LENGTH = 200  # an Idempotency-Key or transactionId
MERCHANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_CURRENCY = re.compile(r"[A-Za-z]{3}")
# camelCase field -> (snake_case service field or None when kept local, longest length)
_OPTIONAL_STRINGS = {
    "merchantName": ("merchant_name", 200),
    "merchantLogo": ("merchant_logo", 500),
    "accentColor": ("accent_color", 7),
    "currency": ("currency", 3),
    "paymentMethod": ("payment_method", 50),
    "location": ("location", 200),
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

    @property
    def local_fields(self) -> dict:
        """Fields kept only in the local queue: the service's schema has no place for them."""
        return {k: self.strings[k] for k in ("cashierId", "terminalId") if k in self.strings}


def parse_body(body: bytes) -> Transaction:
    """Return the Transaction in a raw request body; raise InvalidTransaction if it is not one."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidTransaction("Request body is not valid JSON") from None
    return validate(data)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _amount(value: object) -> bool:
    return _is_int(value) and 0 <= value <= MAX_AMOUNT


def _item(index: int, raw: object) -> dict:
    where = f"items[{index}]"
    if not isinstance(raw, dict):
        raise InvalidTransaction(f"{where} must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidTransaction(f"{where}.name is required and must be a string of 1 to 200 characters")
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
        if not isinstance(sku, str) or len(sku) > 64:
            raise InvalidTransaction(f"{where}.sku must be a string of at most 64 characters")
        item["sku"] = sku
    return item


def _check_string(key: str, value: str) -> None:
    if key == "accentColor" and not _COLOR.fullmatch(value):
        raise InvalidTransaction("accentColor must be a hex colour such as #1a2b3c")
    if key == "currency" and not _CURRENCY.fullmatch(value):
        raise InvalidTransaction("currency must be a 3-letter code such as NGN")
    if key == "merchantLogo":
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in value):
            raise InvalidTransaction("merchantLogo must be an http:// or https:// URL")
    if key == "timestamp":
        parse_timestamp(value)


def parse_timestamp(value: str) -> datetime:
    """Return the aware UTC datetime of an ISO 8601 timestamp (UTC when it has no offset)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidTransaction("timestamp must be an ISO 8601 date and time such as 2026-11-22T10:15:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def validate(data: object) -> Transaction:
    """Return the Transaction of a decoded JSON value; raise InvalidTransaction if it is not one."""
    if not isinstance(data, dict):
        raise InvalidTransaction("Request body must be a JSON object")
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
        strings[key] = value.upper() if key == "currency" else value
    transaction_id = data.get("transactionId")
    if transaction_id is not None and (
        not isinstance(transaction_id, str) or not 1 <= len(transaction_id) <= MAX_KEY_LENGTH
    ):
        raise InvalidTransaction(f"transactionId must be a string of 1 to {MAX_KEY_LENGTH} characters")
    items_ = [_item(i, raw) for i, raw in enumerate(items)]
    return Transaction(merchant_id.strip(), items_, total, strings, transaction_id or None)


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
    return payload
