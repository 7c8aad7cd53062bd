"""Finding a sale as a shop finds it, from what the owner types into the dashboard's search
box: its short code or token, its amount as the customer says it ("19,522.50", "19522.5",
"₦19,522.50"), the card's last four digits, the customer's email address or phone number
(written any way: it is normalised as a sale's contact is), or a day or a range of days.

Every reading is an exact look-up that an index answers, so that a search never reads a
whole table, the operator's list of every merchant's receipts included (the indexes are
Receipt.Meta's). A term may mean several things ("4242": ₦4,242.00 or a card's last four):
the receipt matches any of them.
"""

import re
import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Q
from django.db.models.lookups import Exact

from receipts.codes import SHORT_CODE_LENGTH, SHORT_CODE_RE, TOKEN_RE
from receipts.contacts import normalize_email, normalize_phone
from receipts.models import CARD_LAST4, EMAIL_LOWER
from receipts.money import digits_of_currencies, to_minor, typed_amount
from receipts.validation import MAX_AMOUNT

_LAST4 = re.compile(r"^[*•xX.\s]*(\d{4})$")
_PHONE = re.compile(r"^\+?[\d\s().-]{7,40}$")
_DAY = r"(\d{4}-\d{2}-\d{2})"
_DAYS = re.compile(rf"^{_DAY}(?:\s*(?:to|–|—|\.\.|-)\s*{_DAY})?$")


@dataclass(frozen=True)
class Term:
    """What a search term says: ``query`` matches every receipt it names by any reading;
    ``reference`` only the one it names as a short code or token (None if it is neither),
    which a search opens straight away (a code typed at the counter)."""

    query: Q
    reference: Q | None = None


def read_term(text: str) -> Term | None:
    """The receipts ``text`` names, by every reading it has; None when it has none."""
    text = text.strip()
    reference = _code(text) or _token(text)
    arms = [arm for arm in (reference, _amount(text), _last4(text), _email(text), _phone(text)) if arm is not None]
    if not arms:
        return None
    query = Q()
    for arm in arms:
        query |= arm
    return Term(query, reference)


def typed_days(text: str) -> tuple[date, date] | None:
    """The first and last day of ``text`` if it is a day (``2026-11-22``) or a range of
    days (``2026-11-20 to 2026-11-22``, ``2026-11-20..2026-11-22``), in either order."""
    match = _DAYS.match(text.strip())
    if match is None:
        return None
    try:
        days = [date.fromisoformat(value) for value in match.groups() if value]
    except ValueError:
        return None
    return min(days), max(days)


def sale_days(first: date, last: date, zones: list[str]) -> Q:
    """Sales made from the start of ``first`` to the end of ``last``, both included, as
    the day is in each merchant's time zone (``zones``: those of the merchants searched;
    with one, no join is needed)."""
    query = Q()
    for zone in zones:
        tz = zoneinfo.ZoneInfo(zone)
        start = datetime.combine(first, time.min, tzinfo=tz)
        end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz)
        arm = Q(transaction_date__gte=start, transaction_date__lt=end)
        query |= arm if len(zones) == 1 else arm & Q(merchant__time_zone=zone)
    return query


def _code(text: str) -> Q | None:
    if len(text) == SHORT_CODE_LENGTH and text.isascii() and SHORT_CODE_RE.match(text.upper()):
        return Q(short_code=text.upper())
    return None


def _token(text: str) -> Q | None:
    return Q(token=text) if text.isascii() and TOKEN_RE.match(text) else None


def _amount(text: str) -> Q | None:
    """The total in every currency it can be one of: "4242" is 424200 kobo, 4242 yen and
    4242000 fils; "19522.5" only in currencies with decimals."""
    amount = typed_amount(text)
    if amount is None:
        return None
    groups = digits_of_currencies()
    not_two = [code for digits, codes in groups.items() if digits != 2 for code in codes]
    query = Q()
    for digits, codes in groups.items():
        minor = to_minor(amount, digits)
        if minor is None or minor > MAX_AMOUNT:
            continue
        # Unknown currencies have two digits, as money.currency_info writes them.
        query |= Q(total_amount=minor) & (~Q(currency__in=not_two) if digits == 2 else Q(currency__in=codes))
    return query or None


def _last4(text: str) -> Q | None:
    match = _LAST4.match(text)
    return Q(Exact(CARD_LAST4, match[1])) if match else None


def _email(text: str) -> Q | None:
    if "@" not in text:
        return None
    try:
        address = normalize_email(text)
    except ValueError:
        return None
    # Stored as the customer typed it (its domain lowercased): "Ada@" and "ada@" are one person.
    return Q(Exact(EMAIL_LOWER, address.lower()))


def _phone(text: str) -> Q | None:
    if not _PHONE.match(text) or sum(c.isdigit() for c in text) < 7:
        return None
    try:
        return Q(customer_phone=normalize_phone(text))
    except ValueError:
        return None
