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
_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_CURRENCY = re.compile(r"[A-Z]{3}")
_OPTIONAL_STRINGS = {
    "merchantName": "merchant_name",
    "merchantLogo": "merchant_logo",
    "accentColor": "accent_color",
    "currency": "currency",
    "paymentMethod": "payment_method",
    "location": "location",
    "timestamp": None,
    "cashierId": None,
    "terminalId": None,
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


def _item(index: int, raw: object) -> dict:
    where = f"items[{index}]"
    if not isinstance(raw, dict):
        raise InvalidTransaction(f"{where} must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidTransaction(f"{where}.name is required and must be a non-empty string")
    quantity = raw.get("quantity")
    if not _is_int(quantity) or quantity < 1:
        raise InvalidTransaction(f"{where}.quantity must be an integer >= 1")
    unit_price = raw.get("unitPrice")
    if not _is_int(unit_price) or unit_price < 0:
        raise InvalidTransaction(f"{where}.unitPrice must be an integer >= 0 (minor currency units)")
    total_price = raw.get("totalPrice", quantity * unit_price)
    if not _is_int(total_price) or total_price < 0:
        raise InvalidTransaction(f"{where}.totalPrice must be an integer >= 0 (minor currency units)")
    item = {
        "name": name,
        "quantity": quantity,
        "unit_price": unit_price,
        "total_price": total_price,
    }
    sku = raw.get("sku")
    if sku is not None:
        if not isinstance(sku, str):
            raise InvalidTransaction(f"{where}.sku must be a string")
        item["sku"] = sku
    return item


def _check_string(key: str, value: str) -> None:
    if key == "accentColor" and not _COLOR.fullmatch(value):
        raise InvalidTransaction("accentColor must be a hex colour such as #1a2b3c")
    if key == "currency" and not _CURRENCY.fullmatch(value):
        raise InvalidTransaction("currency must be 3 uppercase letters such as NGN")
    if key == "merchantLogo":
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
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
    if not isinstance(merchant_id, str) or not merchant_id.strip():
        raise InvalidTransaction("merchantId must be a non-empty string")
    items = data["items"]
    if not isinstance(items, list) or not items:
        raise InvalidTransaction("items must be a non-empty array")
    total = data["totalAmount"]
    if not _is_int(total) or total < 0:
        raise InvalidTransaction("totalAmount must be an integer >= 0 (minor currency units)")
    strings = {}
    for key in _OPTIONAL_STRINGS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidTransaction(f"{key} must be a string")
        _check_string(key, value)
        strings[key] = value
    return Transaction(
        merchant_id.strip(),
        [_item(i, raw) for i, raw in enumerate(items)],
        total,
        strings,
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
    for key, service_key in _OPTIONAL_STRINGS.items():
        if service_key and key in tx.strings:
            payload[service_key] = tx.strings[key]
    payload["total_amount"] = tx.total_amount
    moment = parse_timestamp(tx.strings["timestamp"]) if "timestamp" in tx.strings else now
    payload["transaction_date"] = iso_utc(moment)
    payload["items"] = tx.items
    payload["status"] = "completed"
    return payload
