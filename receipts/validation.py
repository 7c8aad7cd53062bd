"""Validation of the createReceiptFromPOS input (docs/api.md, "createReceiptFromPOS").

Every failure is an InvalidInput whose message names each offending field, for
example ``items[0].quantity: Must be a JSON integer, not a string or a decimal.``
"""

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import orjson
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import serializers

from merchants.colors import normalize_accent_color
from merchants.models import string_id_validator
from receco.errors import InvalidInput
from receipts.codes import (
    SHORT_CODE_FORM_MESSAGE,
    SHORT_CODE_LENGTH,
    SHORT_CODE_RE,
    TOKEN_FORM_MESSAGE,
    TOKEN_MAX_LENGTH,
    TOKEN_RE,
)
from receipts.contacts import (
    MAX_EMAIL_LENGTH,
    MAX_PHONE_LENGTH,
    PHONE_CHANNEL_MESSAGE,
    PHONE_CHANNELS,
    normalize_email,
    normalize_phone,
    normalize_phone_channel,
)
from receipts.numbering import NO_TERMINAL_CODE, TERMINAL_ID_MAX_LENGTH, terminal_code

# Upper bounds, documented in docs/api.md. A body over RECECO_MAX_BODY_BYTES is refused
# before any of this runs.
MAX_ITEMS = 500
MAX_AMOUNT = 10**15  # minor units; far above any sale, below JavaScript's 2**53
MAX_QUANTITY = 1_000_000
MAX_TAX_LINES = 20
MAX_TAX_RATE = 100  # percent
# Sales are dated from this moment to this far ahead of now (a till's clock may run a
# little fast): dates outside cannot be a real sale, and near the calendar's edges they
# cannot even be shown in every time zone.
EARLIEST_TRANSACTION_DATE = datetime(2000, 1, 1, tzinfo=UTC)
TRANSACTION_DATE_LEEWAY = timedelta(days=1)
DEFAULT_CURRENCY = "NGN"
DEFAULT_STATUS = "completed"


class StrictIntegerField(serializers.IntegerField):
    """An integer that must arrive as a JSON number with no fraction: ``100`` and ``100.0``
    (JSON Schema's ``integer`` admits both) are 100; ``100.5``, ``"100"`` and ``true`` are refused."""

    default_error_messages = {"invalid": "Must be a JSON integer, not a string or a decimal."}

    def to_internal_value(self, data):
        whole = json_integer(data)
        if whole is None:
            self.fail("invalid")
        return super().to_internal_value(whole)


def json_integer(value: object) -> int | None:
    """``value`` as an integer if it is a JSON number with no fraction (``1556`` or
    ``1556.0``, as JSON Schema's ``integer`` reads them), else None (``1556.5``, a string, a
    boolean)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


class StrictCharField(serializers.CharField):
    """A string that must arrive as a JSON string; numbers are not silently converted."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictNumberField(serializers.FloatField):
    """A number that must arrive as a JSON number (integer or decimal): not a string or a boolean."""

    default_error_messages = {"invalid": "Must be a JSON number, not a string."}

    def to_internal_value(self, data):
        if type(data) not in (int, float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """true or false as JSON booleans: "true", 1 and "yes" are refused."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if type(data) is not bool:
            self.fail("invalid")
        return data


def _optional_text(max_length: int) -> StrictCharField:
    return StrictCharField(required=False, default=None, allow_null=True, allow_blank=True, max_length=max_length)


def _optional_amount() -> StrictIntegerField:
    return StrictIntegerField(required=False, default=None, allow_null=True, min_value=0, max_value=MAX_AMOUNT)


# A full card number must never be stored: 12 or more digits in a row (spaces or dashes
# between them included) anywhere in payment_details refuse the sale.
CARD_NUMBER_RE = re.compile(r"(?:\d[ -]?){11}\d")


class TaxLineSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    rate = StrictNumberField(min_value=0, max_value=MAX_TAX_RATE)  # a percentage, such as 7.5
    taxable_amount = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    tax_amount = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    # True when the tax is already inside the item prices (it adds nothing to the total).
    inclusive = StrictBooleanField(required=False, default=False)


class PaymentDetailsSerializer(serializers.Serializer):
    card_brand = _optional_text(32)
    card_last4 = _optional_text(4)
    authorization_code = _optional_text(64)

    def to_internal_value(self, data):
        if isinstance(data, dict) and any(CARD_NUMBER_RE.search(str(value)) for value in leaves(data)):
            raise serializers.ValidationError("Must not hold a card number (12 or more digits in a row)")
        values = super().to_internal_value(data)
        return {name: value for name, value in values.items() if value}

    def validate_card_last4(self, value):
        if value and not re.fullmatch(r"[0-9]{4}", value):
            raise serializers.ValidationError("Must be the last 4 digits of the card.")
        return value


def leaves(value):
    """Every value inside a JSON value, however deep, the keys of objects included."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from leaves(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from leaves(inner)
    else:
        yield value


class ItemSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200)
    quantity = StrictIntegerField(min_value=1, max_value=MAX_QUANTITY)
    unit_price = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    total_price = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    sku = _optional_text(64)


def _has_host(url: str) -> bool:
    """Whether ``url`` splits into parts with a host (and a port, if any, that is a
    number): ``http://[::1`` does not, and every page showing it would fail."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return False
    return bool(parts.hostname)


class SaleSerializer(serializers.Serializer):
    token = _optional_text(TOKEN_MAX_LENGTH)
    short_code = _optional_text(SHORT_CODE_LENGTH)
    merchant_string_id = StrictCharField(max_length=64)
    merchant_name = _optional_text(200)
    merchant_logo = _optional_text(500)
    accent_color = _optional_text(7)
    total_amount = StrictIntegerField(min_value=0, max_value=MAX_AMOUNT)
    currency = _optional_text(3)
    transaction_date = _optional_text(40)
    items = ItemSerializer(many=True, allow_empty=False, max_length=MAX_ITEMS)
    category = _optional_text(100)
    payment_method = _optional_text(50)
    location = _optional_text(200)
    status = _optional_text(32)
    customer_email = _optional_text(MAX_EMAIL_LENGTH)
    customer_phone = _optional_text(MAX_PHONE_LENGTH)
    # "sms" (the default) or "whatsapp": how the customer asked for it at that number.
    customer_phone_channel = serializers.ChoiceField(
        choices=list(PHONE_CHANNELS),
        required=False,
        default=None,
        allow_null=True,
        allow_blank=True,
        error_messages={"invalid_choice": PHONE_CHANNEL_MESSAGE},
    )
    subtotal_amount = _optional_amount()
    discount_amount = _optional_amount()
    tip_amount = _optional_amount()
    # The list made apart from its lines: many=True would hand the lines allow_null too,
    # and a null line would pass validation and fail on storing (a 500, not a 400).
    tax_lines = serializers.ListSerializer(
        child=TaxLineSerializer(), required=False, allow_null=True, default=None, max_length=MAX_TAX_LINES
    )
    payment_details = PaymentDetailsSerializer(required=False, allow_null=True, default=None)
    # The till: the sale is numbered in its own series (receipts.numbering).
    terminal_id = _optional_text(TERMINAL_ID_MAX_LENGTH)

    def validate_token(self, value):
        if value and not TOKEN_RE.match(value):
            raise serializers.ValidationError(TOKEN_FORM_MESSAGE)
        return value or None

    def validate_short_code(self, value):
        code = (value or "").strip()
        code = code.upper() if code.isascii() else code  # "ſ".upper() is "S": no Unicode case mapping
        if code and not SHORT_CODE_RE.match(code):
            raise serializers.ValidationError(SHORT_CODE_FORM_MESSAGE)
        return code or None

    def validate_merchant_string_id(self, value):
        try:
            string_id_validator(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None
        return value

    def validate_merchant_logo(self, value):
        if not value:
            return None
        if not re.match(r"^https?://[^\s/]+\S*$", value, re.IGNORECASE):
            raise serializers.ValidationError("Must be an http:// or https:// URL.")
        if not _has_host(value):
            raise serializers.ValidationError("Must be a URL with a valid host name and port.")
        return value

    def validate_accent_color(self, value):
        if not value:
            return None
        try:
            return normalize_accent_color(value)
        except ValueError:
            raise serializers.ValidationError("Must be a hex colour like #1a2b3c or #abc.") from None

    def validate_currency(self, value):
        if not value:
            return DEFAULT_CURRENCY
        if not re.fullmatch(r"[A-Za-z]{3}", value):
            raise serializers.ValidationError("Must be a 3-letter ISO 4217 code such as NGN.")
        return value.upper()

    def validate_transaction_date(self, value):
        if not value:
            return None
        try:
            parsed = parse_datetime(value.strip())
        except ValueError:
            parsed = None
        if parsed is None:
            raise serializers.ValidationError("Must be an ISO 8601 date and time, e.g. 2026-11-22T10:15:00Z.")
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        try:
            moment = parsed.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+01:00 is a moment of year 0
            moment = None
        if moment is None or not EARLIEST_TRANSACTION_DATE <= moment <= timezone.now() + TRANSACTION_DATE_LEEWAY:
            raise serializers.ValidationError("Must be between 2000-01-01T00:00:00Z and one day from now.")
        return moment

    def validate_status(self, value):
        return value.strip() if value and value.strip() else DEFAULT_STATUS

    def validate_terminal_id(self, value):
        if not value:
            return None
        if not terminal_code(value):
            raise serializers.ValidationError(NO_TERMINAL_CODE)
        return value

    def validate_customer_email(self, value):
        return _contact(normalize_email, value)

    def validate_customer_phone(self, value):
        return _contact(normalize_phone, value)

    def validate_customer_phone_channel(self, value):
        return _contact(normalize_phone_channel, value)

    def to_internal_value(self, data):
        values = _blanks_are_absent(super().to_internal_value(data))
        values["items"] = [_without_blank_sku(item) for item in values["items"]]
        return values

    def validate(self, attrs):
        problem = sums_problem(attrs)
        if problem:
            raise serializers.ValidationError(problem)
        attrs["tax_lines"] = [dict(line) for line in attrs["tax_lines"]] if attrs["tax_lines"] else None
        attrs["payment_details"] = attrs["payment_details"] or None
        return attrs


def sums_problem(sale: dict) -> dict[str, str] | None:
    """What does not add up in a sale that gives its subtotal: {field: message}, or None.

    The subtotal is the sum of the items' total_price, and subtotal - discount + the tax
    of the lines that are not inclusive + tip is the total."""
    subtotal = sale.get("subtotal_amount")
    if subtotal is None:
        return None
    items = sum(item["total_price"] for item in sale["items"])
    if subtotal != items:
        return {"subtotal_amount": f"Must equal the sum of the items' total_price ({items})"}
    added_tax = sum(line["tax_amount"] for line in sale.get("tax_lines") or () if not line["inclusive"])
    expected = subtotal - (sale.get("discount_amount") or 0) + added_tax + (sale.get("tip_amount") or 0)
    if sale["total_amount"] != expected:
        return {
            "total_amount": "Must equal subtotal_amount - discount_amount + the tax_amount of the tax_lines "
            f"that are not inclusive + tip_amount ({expected})"
        }
    return None


# Free text sent blank is stored as absent (null), like text not sent at all.
_BLANK_IS_ABSENT = ("merchant_name", "category", "payment_method", "location")


def _blanks_are_absent(values: dict) -> dict:
    for name in _BLANK_IS_ABSENT:
        values[name] = values.get(name) or None
    return values


def _without_blank_sku(item) -> dict:
    item = dict(item)
    if not item.get("sku"):
        item.pop("sku", None)
    return item


def validate_sale(data: object) -> dict:
    """Return the validated, normalised sale with every optional field present.

    ``token``, ``short_code`` and ``transaction_date`` are None when the POS did not send
    them (the caller fills them in). Raises InvalidInput naming every bad field.
    """
    if not isinstance(data, dict):
        raise InvalidInput("Input must be a JSON object")
    sale = _well_formed_sale(data)
    if sale is not None:
        return sale
    serializer = SaleSerializer(data=data)
    if not serializer.is_valid():
        raise InvalidInput(errors_message(serializer.errors))
    sale = dict(serializer.validated_data)
    sale["items"] = [dict(item) for item in sale["items"]]
    return sale


# The fast path. SaleSerializer builds a copy of each of its ~25 fields for every sale,
# which costs more than storing the receipt. A sale from a POS is almost always well
# formed, so it is first read by the plain code below, which accepts exactly what the
# serializer accepts and returns exactly what it returns (tests/receipts/
# test_validation_fast_path.py compares the two). Its bounds are read from the
# serializer's fields once, when this module is imported, and its per-field checks are
# the serializer's own validate_<field> methods. At the first thing it does not accept,
# it gives up and the serializer reads the sale, naming every bad field.


class _Refused(Exception):
    """Not for the fast path: let the serializer judge (and explain) this sale."""


_SURROGATES = re.compile("[\ud800-\udfff]")


def _reader(field: serializers.Field, check):
    """A plain function reading one field as ``field`` would (None when absent), then
    ``check`` (the serializer's validate_<field>); raises _Refused for anything else."""
    if isinstance(field, serializers.BaseSerializer):

        def read_absent(value):  # nested objects (tax lines, payment details): the serializer's
            if value is not None:
                raise _Refused
            return None

        return read_absent
    if isinstance(field, StrictIntegerField):
        minimum, maximum, optional = field.min_value, field.max_value, not field.required

        def read_integer(value):
            if value is None and optional:
                return None
            if type(value) is not int or not minimum <= value <= maximum:
                raise _Refused
            return value

        return read_integer
    if isinstance(field, serializers.ChoiceField):
        choices, optional, blank = set(field.choices), not field.required, field.allow_blank

        def read_choice(value):
            if (value is None and optional) or (value == "" and blank) or (type(value) is str and value in choices):
                return check(value) if check else value
            raise _Refused

        return read_choice
    max_length, required = field.max_length, field.required

    def read_text(value):
        if value is None:
            if required:
                raise _Refused
            return check(None) if check else None
        if type(value) is not str:
            raise _Refused
        value = value.strip()
        if (not value and required) or len(value) > max_length or "\x00" in value:
            raise _Refused
        if not value.isascii() and _SURROGATES.search(value):
            raise _Refused
        return check(value) if check else value

    return read_text


def _readers(serializer: serializers.Serializer) -> dict:
    return {
        name: _reader(field, getattr(serializer, f"validate_{name}", None))
        for name, field in serializer.fields.items()
        if name != "items"
    }


_CHECKS = SaleSerializer()  # for its validate_<field> methods, which keep no state
_SALE_READERS = _readers(_CHECKS)
_ITEM_READERS = _readers(ItemSerializer())
_REQUIRED = object()


def _with_absent(readers: dict) -> list[tuple]:
    """``(name, read, absent)`` of each reader: ``absent`` is what it makes of a field not
    sent, the same for every sale (None, a default such as "NGN"), read here once;
    _REQUIRED for a field that must be sent."""
    fields = []
    for name, read in readers.items():
        try:
            absent = read(None)
        except (_Refused, serializers.ValidationError):
            absent = _REQUIRED
        if absent is not _REQUIRED and absent is not None and type(absent) not in (str, int, bool):
            raise TypeError(f"{name}: shared by every sale, its absent value must not change: {absent!r}")
        fields.append((name, read, absent))
    return fields


_ITEMS = _CHECKS.fields["items"]
_MAX_ITEMS = _ITEMS.max_length


def _well_formed_sale(data: dict) -> dict | None:
    """Return what SaleSerializer makes of ``data``, or None if it is not plainly valid."""
    try:
        sale = _read(_SALE_FIELDS, data)
        items = data.get("items")
        if type(items) is not list or not 1 <= len(items) <= _MAX_ITEMS:
            raise _Refused
        sale["items"] = [_item(item) for item in items]
    except (_Refused, serializers.ValidationError):
        return None
    if sums_problem(sale):
        return None
    return _blanks_are_absent(sale)


def _item(item) -> dict:
    if type(item) is not dict:
        raise _Refused
    return _without_blank_sku(_read(_ITEM_FIELDS, item))


def _read(fields: list[tuple], data: dict) -> dict:
    """Each of ``fields`` read from ``data``: a field not sent (or null) is its ``absent``."""
    values = {}
    for name, read, absent in fields:
        value = data.get(name)
        values[name] = absent if value is None and absent is not _REQUIRED else read(value)
    return values


def _contact(normalize, value):
    if not value:
        return None
    try:
        return normalize(value)
    except ValueError as exc:
        raise serializers.ValidationError(str(exc)) from None


# Fields a sale gained after receipts were first stored: when absent they stay out of the
# fingerprint, so a replay of an older sale still matches the fingerprint it was stored with.
_LATER_FIELDS = (
    "subtotal_amount",
    "discount_amount",
    "tip_amount",
    "tax_lines",
    "payment_details",
    "terminal_id",
    "customer_phone_channel",
)


def sale_fingerprint(sale: dict) -> str:
    """Return a digest of the sale's content; the short code is left out because the
    service may have replaced it on a collision, and a replay still sends the original."""
    content = {
        key: value
        for key, value in sale.items()
        if key != "short_code" and not (value is None and key in _LATER_FIELDS)
    }
    return hashlib.sha256(_canonical(content)).hexdigest()


# The digest is of the sale's JSON as the standard library writes it (keys sorted, no
# spaces, every character beyond ASCII escaped), as it was when the first receipts were
# stored: their fingerprints must match a replay. orjson writes the same bytes, faster,
# but for characters beyond ASCII and DEL (raw, not escaped) and floats: some finite ones
# (1e-05 as 0.00001) and NaN (null). Content with any of them takes the standard library's
# way: a sale with tax lines (their rates are the only floats a sale holds, and may be NaN),
# and any other whose JSON holds a number with a point or an exponent (or text like one).
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
_FLOAT = re.compile(rb"[:,\[]-?[0-9]+[.eE]")


def _canonical(content: dict) -> bytes:
    """``json.dumps(content, sort_keys=True, separators=(",", ":"))`` as bytes, dates in ISO 8601."""
    if content.get("tax_lines") is None:
        try:
            encoded = orjson.dumps(content, default=_json_default, option=_ORJSON_OPTIONS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits, or what the standard library refuses too
            pass
        else:
            if encoded.isascii() and b"\x7f" not in encoded and not _FLOAT.search(encoded):
                return encoded
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=_json_default).encode()


def _json_default(value):
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def errors_message(errors) -> str:
    """A DRF error structure as one message naming each field: ``items[0].quantity: …; total_amount: …``."""
    return "; ".join(_flatten(errors))


def _flatten(errors, prefix: str = ""):
    """Yield ``field.path: message`` for a DRF error structure."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == "non_field_errors":
                name = prefix
            elif isinstance(key, int):  # list errors keyed by position
                name = f"{prefix}[{key}]"
            else:
                name = f"{prefix}.{key}" if prefix else key
            yield from _flatten(value, name)
    elif isinstance(errors, list):
        if all(isinstance(error, str) for error in errors):
            for error in errors:
                message = str(error).rstrip(".")
                yield f"{prefix}: {message}" if prefix else message
        else:
            for index, value in enumerate(errors):
                if value:
                    yield from _flatten(value, f"{prefix}[{index}]")


# Read once the module is whole: the readers' checks call its functions.
_SALE_FIELDS = _with_absent(_SALE_READERS)
_ITEM_FIELDS = _with_absent(_ITEM_READERS)
