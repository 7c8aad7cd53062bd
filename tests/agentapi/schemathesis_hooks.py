"""Schemathesis hooks of tests/agentapi/test_openapi_schemathesis.py (SCHEMATHESIS_HOOKS).

The OpenAPI document states every rule of the procedures' inputs that a JSON Schema can
state (agentapi.openapi.rules), and schemathesis holds it to the service both ways: what
fits the document is accepted, what does not is refused. A few rules no schema can state,
and the document says them in words; these hooks keep schemathesis from drawing inputs
that break one of them, each checked by the service's own code:

- a sale's transaction_date (ISO 8601, from 2000 to a day from now), customer_email (at a
  public domain), customer_phone (a number that exists), merchant_logo (a URL with a
  host), payment_details (no card number anywhere in it) and its sums;
- a contact's email address and phone number, the same way;
- a refund's items by their place in the sale, which depends on the sale: only the first
  (index 0), which every sale has;
- a consistency proof's sizes (from <= to <= the log's size, LOG_SIZE).

Every other mismatch fails the run.
"""

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

import schemathesis  # noqa: E402
from rest_framework import serializers  # noqa: E402

from receipts.contacts import normalize_email, normalize_phone  # noqa: E402
from receipts.validation import CARD_NUMBER_RE, SaleSerializer, leaves, sums_problem  # noqa: E402

LOG_SIZE = int(os.environ.get("RECECO_FUZZ_LOG_SIZE", "0"))
_SALE = SaleSerializer()


def _given(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _breaks(check, value) -> bool:
    try:
        check(value)
    except (ValueError, serializers.ValidationError):
        return True
    return False


def _sums_break(sale: dict) -> bool:
    try:
        return sums_problem({**sale, "tax_lines": sale.get("tax_lines") or ()}) is not None
    except (TypeError, KeyError, AttributeError):
        return False  # not a sale of the right types: the schema refuses it


def _sale_breaks(sale) -> bool:
    if not isinstance(sale, dict):
        return False
    checks = [
        ("transaction_date", lambda value: _SALE.validate_transaction_date(value.strip())),
        ("customer_email", lambda value: normalize_email(value.strip())),
        ("customer_phone", lambda value: normalize_phone(value.strip())),
        ("merchant_logo", lambda value: _SALE.validate_merchant_logo(value.strip())),
    ]
    if any(_given(sale.get(name)) and _breaks(check, sale[name]) for name, check in checks):
        return True
    details = sale.get("payment_details")
    if isinstance(details, dict) and any(CARD_NUMBER_RE.search(str(leaf)) for leaf in leaves(details)):
        return True
    return _sums_break(sale)


def _contact_breaks(contact) -> bool:
    if not isinstance(contact, dict):
        return False
    checks = [("email", normalize_email), ("phone", normalize_phone)]
    return any(_given(contact.get(name)) and _breaks(check, contact[name]) for name, check in checks)


def _refund_breaks(refund) -> bool:
    lines = refund.get("items") if isinstance(refund, dict) else None
    if not isinstance(lines, list):
        return False
    indexes = [line.get("index") for line in lines if isinstance(line, dict)]
    return any(isinstance(index, int | float) and index >= 1 for index in indexes)


def _sizes_break(sizes) -> bool:
    if not isinstance(sizes, dict):
        return False
    old, new = sizes.get("from"), sizes.get("to")
    new = LOG_SIZE if new is None else new
    if not all(isinstance(size, int | float) and not isinstance(size, bool) for size in (old, new)):
        return False
    return not old <= new <= LOG_SIZE


_BREAKS = {
    "createReceiptFromPOS": _sale_breaks,
    "updateReceiptContact": _contact_breaks,
    "refundReceipt": _refund_breaks,
}


@schemathesis.hook
def filter_case(context, case) -> bool:
    """Keep a case unless its input breaks a rule no schema can state."""
    name = case.operation.path.rsplit("/", 1)[-1]
    if name == "getLogConsistency":
        sizes = (case.query or {}).get("input")
        if isinstance(sizes, str):
            try:
                sizes = json.loads(sizes)
            except ValueError:
                return True
        return not _sizes_break(sizes)
    breaks = _BREAKS.get(name)
    return breaks is None or not breaks(case.body)
