"""Finding a sale as a shop finds it, from what the owner types into the dashboard's search
box: its short code or token, the code of its gift receipt (receipts.gifts), its amount as
the customer says it ("19,522.50", "19522.5", "₦19,522.50"), the card's last four digits,
the customer's email address or phone number (written any way: it is normalised as a
sale's contact is), or a day or a range of days as the shop writes them (``26/11/2026``,
``26 Nov``, ``yesterday``, ``20/11 - 22/11``), or a whole month (``Nov 2026``, ``last
month``): in the order of day and month of its country, in its time zone.

Every reading is an exact look-up that an index answers, so that a search never reads a
whole table, the operator's list of every merchant's receipts included (the indexes are
Receipt.Meta's). A term may mean several things ("4242": ₦4,242.00 or a card's last four):
the receipt matches any of them. One reading is no exact look-up: a word of an item's name
("jollof" finds "Jollof rice (plate)", whatever the case), asked for only where the search
is of known shops' receipts (``items=True``), whose rows the merchant's index narrows it to.

``why`` says which reading found a receipt on the page shown, as the list shows it: the
item that matched, the card's last four, the contact masked.
"""

import calendar
import re
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.core.paginator import Paginator
from django.db.models import BooleanField, F, Func, Q, Value
from django.db.models.lookups import Exact
from django.utils.functional import cached_property

from receipts import gifts
from receipts.codes import SHORT_CODE_LENGTH, SHORT_CODE_RE, TOKEN_RE
from receipts.contacts import mask_email, mask_phone, normalize_email, normalize_phone
from receipts.models import CARD_LAST4, EMAIL_LOWER, Receipt
from receipts.money import digits_of_currencies, format_amount, to_minor, typed_amount
from receipts.validation import MAX_AMOUNT

_LAST4 = re.compile(r"^[*•xX.\s]*(\d{4})$")
_PHONE = re.compile(r"^\+?[\d\s().-]{7,40}$")
# Between the two days of a range, with or without spaces: "to", a dash, "..".
_RANGE = re.compile(r" ?(?:to|–|—|\.\.|-) ?")
_YEAR_FIRST = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})")
# Two numbers in the shop's order of day and month, and a year of 2 or 4 digits; a dot only
# with the year ("12.50" is an amount).
_NUMERIC = re.compile(r"(\d{1,2})([/.-])(\d{1,2})(?:\2(\d{2}|\d{4}))?")
_MONTH_NAMES = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
# Each month by its name and its first three letters; September also as "Sept".
_MONTH_WORDS = {word: number for number, name in enumerate(_MONTH_NAMES, 1) for word in (name, name[:3])} | {"sept": 9}
_MONTH = "(" + "|".join(sorted(_MONTH_WORDS, key=len, reverse=True)) + r")\.?"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_NAMED_YEAR = r"(?:[ ,/-]+(\d{4}))?"
_DAY_MONTH = re.compile(rf"{_ORDINAL}(?: of)?[ /-]?{_MONTH}{_NAMED_YEAR}")
_MONTH_DAY = re.compile(rf"{_MONTH}[ /-]?{_ORDINAL}{_NAMED_YEAR}")
_MONTH_ALONE = re.compile(rf"{_MONTH}{_NAMED_YEAR}")
# Countries whose numeric dates put the month before the day (11/26/2026): the United
# States and its territories, the Philippines, the Marshall Islands, and the countries that
# write the year first (2026/11/26, so 11/26 without it). The rest of the world writes the
# day first, and so it is read where both are written (Canada).
MONTH_FIRST = frozenset(
    {"US", "AS", "GU", "MP", "PR", "UM", "VI", "PH", "MH", "CN", "JP", "KR", "KP", "TW", "MN", "HU", "LT"}
)
_LONGEST = 80  # more than two days written out in full ("30th of September 2026 to ...") take
# A year left out goes back at most this far for a day the calendar has (29 February: 8 years
# around 2100).
_YEARS_BACK = 8


@dataclass(frozen=True)
class Term:
    """What a search term says: ``query`` matches every receipt it names by any reading;
    ``reference`` only the one it names as a short code or token (None if it is neither),
    which a search opens straight away (a code typed at the counter)."""

    query: Q
    reference: Q | None = None


def read_term(text: str, items: bool = False) -> Term | None:
    """The receipts ``text`` names, by every reading it has, a word of an item's name among
    them with ``items``; None when it has none."""
    text = text.strip()
    reference = _code(text) or _gift(text) or _token(text)
    readings = (reference, _amount(text), _last4(text), _email(text), _phone(text), items and _item(text) or None)
    arms = [arm for arm in readings if arm is not None]
    if not arms:
        return None
    query = Q()
    for arm in arms:
        query |= arm
    return Term(query, reference)


def searched_days(text: str, calendars: Iterable[tuple[str, str]], now: datetime) -> Q | None:
    """Sales of the day or days ``text`` names, as each shop searched writes and counts
    days (``calendars``: the (country, time zone) pairs of the merchants searched; with one,
    no join is needed), at the moment ``now``; None when it names no day for any of them."""
    calendars = sorted(set(calendars))
    readings: dict[tuple[date, date, str], list[str]] = {}
    for country, zone in calendars:
        days = typed_days(text, _today(zone, now), month_first=country in MONTH_FIRST)
        if days is not None:
            readings.setdefault((*days, zone), []).append(country)
    if not readings:
        return None
    if len(calendars) == 1:
        return _between(*next(iter(readings)))
    query = Q()
    for (first, last, zone), countries in readings.items():
        arm = _between(first, last, zone) & Q(merchant__time_zone=zone)
        if countries != [country for country, other in calendars if other == zone]:
            arm &= Q(merchant__country__in=countries)  # the zone's shops read it as different days
        query |= arm
    return query


def names_no_day(text: str, calendars: Iterable[tuple[str, str]], now: datetime) -> bool:
    """True when ``text`` is written as a day or days but no shop searched has such a day
    in its calendar (``31/02``; ``13/05`` where the month comes first), which a search that
    finds nothing then says."""
    readings = [_read(text, _today(zone, now), country in MONTH_FIRST) for country, zone in set(calendars)]
    return bool(readings) and all(reading is _NO_SUCH_DAY for reading in readings)


def typed_days(text: str, today: date, month_first: bool = False) -> tuple[date, date] | None:
    """The first and last day of ``text`` if it is a day or a range of days as a shop writes
    them, on the day ``today`` (the shop's): ``2026-11-22``; ``26/11/2026``, ``26/11``,
    ``26-11-26``, ``26.11.2026`` (``11/26`` with ``month_first``); ``26 Nov``, ``26th of
    November 2026``, ``Nov 26, 2026``; ``today``, ``yesterday``; two of them joined by
    ``to``, ``-``, ``–`` or ``..``; a whole month: ``Nov 2026``, ``November``, ``this
    month``, ``last month``. A day or month without its year is the latest such day up to
    ``today``; a range whose last day then comes before its first is read as the shorter of
    the days between them (``22/11 - 20/11``) and the days from the first to the last a year
    on (``20/12 - 5/1`` in January). None when ``text`` is no day (``4242``, ``31/02``)."""
    days = _read(text, today, month_first)
    return None if days is _NO_SUCH_DAY else days


def sale_days(first: date, last: date, zones: list[str]) -> Q:
    """Sales made from the start of ``first`` to the end of ``last``, both included, as
    the day is in each merchant's time zone (``zones``: those of the merchants searched;
    with one, no join is needed)."""
    if len(zones) == 1:
        return _between(first, last, zones[0])
    query = Q()
    for zone in zones:
        query |= _between(first, last, zone) & Q(merchant__time_zone=zone)
    return query


def _between(first: date, last: date, zone: str) -> Q:
    # A day away from the calendar's ends, so that no zone's midnight falls off them (9999-12-31).
    first, last = max(first, date.min + timedelta(days=1)), min(last, date.max - timedelta(days=1))
    tz = zoneinfo.ZoneInfo(zone)
    start = datetime.combine(first, time.min, tzinfo=tz)
    end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz)
    return Q(transaction_date__gte=start, transaction_date__lt=end)


def _today(zone: str, now: datetime) -> date:
    return now.astimezone(zoneinfo.ZoneInfo(zone)).date()


@dataclass(frozen=True)
class _Day:
    """A day as typed: its month and day, and its year if given (today's and yesterday's are)."""

    month: int
    day: int
    year: int | None


_NO_SUCH_DAY = object()  # written as a day, but the calendar has none such (31/02)


def _read(text: str, today: date, month_first: bool):
    """``text``'s first and last day; _NO_SUCH_DAY when it is written as days of which one
    is not in the calendar; None when it is no day at all."""
    text = " ".join(text.lower().split())
    if not text or len(text) > _LONGEST:
        return None
    whole = _day(text, today, month_first)
    if isinstance(whole, _Day):
        day = _resolved(whole, today)
        return (day, day) if day is not None else _NO_SUCH_DAY
    if whole is None and (month := _month(text, today)) is not None:
        return month
    impossible = whole is _NO_SUCH_DAY
    for position in range(1, len(text)):
        joint = _RANGE.match(text, position)
        if joint is None or joint.end() == len(text):
            continue
        ends = [
            _day(text[:position].strip(), today, month_first),
            _day(text[joint.end() :].strip(), today, month_first),
        ]
        if all(isinstance(end, _Day) for end in ends):
            days = _range(*ends, today)
            if days is not None:
                return days
        impossible |= all(end is not None for end in ends)
    return _NO_SUCH_DAY if impossible else None


def _day(text: str, today: date, month_first: bool):
    """One day as typed: a _Day, _NO_SUCH_DAY (31/02), or None when it is not written as a day."""
    if text in ("today", "yesterday"):
        day = today - timedelta(days=0 if text == "today" else 1)
        return _Day(day.month, day.day, day.year)
    if found := _YEAR_FIRST.fullmatch(text):
        return _checked(int(found[3]), int(found[4]), int(found[1]))
    if (found := _NUMERIC.fullmatch(text)) and (found[2] != "." or found[4]):
        month, day = (found[1], found[3]) if month_first else (found[3], found[1])
        year = found[4] and int(found[4]) + (2000 if len(found[4]) == 2 else 0)
        return _checked(int(month), int(day), year)
    if found := _DAY_MONTH.fullmatch(text):
        return _checked(_MONTH_WORDS[found[2]], int(found[1]), found[3] and int(found[3]))
    if found := _MONTH_DAY.fullmatch(text):
        return _checked(_MONTH_WORDS[found[1]], int(found[2]), found[3] and int(found[3]))
    return None


def _month(text: str, today: date) -> tuple[date, date] | None:
    """The first and last day of the month ``text`` names (``nov 2026``, ``november``,
    ``this month``, ``last month``), one without its year the latest begun by ``today``;
    None when it names no month."""
    if text in ("this month", "last month"):
        first = today.replace(day=1)
        if text == "last month":
            first = (first - timedelta(days=1)).replace(day=1)
    elif found := _MONTH_ALONE.fullmatch(text):
        month = _MONTH_WORDS[found[1]]
        year = int(found[2]) if found[2] else today.year - (month > today.month)
        if not date.min.year <= year <= date.max.year:
            return None
        first = date(year, month, 1)
    else:
        return None
    return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])


def _checked(month: int, day: int, year: int | None):
    try:
        date(year or 2000, month, day)  # 2000 had a 29 February
    except ValueError:
        return _NO_SUCH_DAY
    return _Day(month, day, year)


def _resolved(day: _Day, today: date) -> date | None:
    """The date of ``day``: as typed with its year, else the latest such day up to ``today``."""
    if day.year is not None:
        return _dated(day, day.year)
    for year in range(today.year, today.year - _YEARS_BACK - 1, -1):
        found = _dated(day, year)
        if found is not None and found <= today:
            return found
    return None


def _range(first: _Day, last: _Day, today: date) -> tuple[date, date] | None:
    start, end = _resolved(first, today), _resolved(last, today)
    if start is None or end is None:
        return None
    if start <= end:
        return start, end
    readings = [(end, start)]  # typed backwards, or
    if last.year is None:  # across the New Year: 20/12 - 5/1
        later = _dated(last, end.year + 1)
        readings += [(start, later)] if later is not None and start <= later else []
    elif first.year is None:
        earlier = _dated(first, start.year - 1)
        readings += [(earlier, end)] if earlier is not None and earlier <= end else []
    return min(readings, key=lambda days: days[1] - days[0])


def _dated(day: _Day, year: int) -> date | None:
    try:
        return date(year, day.month, day.day)
    except ValueError:
        return None


def _code(text: str) -> Q | None:
    if len(text) == SHORT_CODE_LENGTH and text.isascii() and SHORT_CODE_RE.match(text.upper()):
        return Q(short_code=text.upper())
    return None


def _gift(text: str) -> Q | None:
    """The sale whose gift receipt has the code ``text`` (GiftReceipt.code's unique index)."""
    return Q(gift__code=text.upper()) if text.isascii() and gifts.is_code(text) else None


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


# An item's name is searched for a term of at least this many characters, one a letter.
ITEM_TERM_MIN = 3
# The items' names as one text (a JSON list of them), as PostgreSQL's trigram index holds
# them (receipts/migrations/0013_item_names_trigram_index.py, ITEM_NAMES: the same expression).
ITEM_NAMES = "(jsonb_path_query_array({items}, '$[*].name')::text)"


class ItemNamed(Func):
    """True when an item of ``items`` (a receipt's list of {name, ...}) has a name LIKE
    ``pattern`` (its wildcards escaped with a backslash), whatever the case: one EXISTS over
    the row's own list, in each database's JSON functions. On PostgreSQL a term of letters,
    digits and spaces (``words``: the pattern's without its wildcards) is matched by a JSON
    path instead, which reads the list in place at half the cost (bench/search.py)."""

    output_field = BooleanField()
    arity = 2

    def __init__(self, items, pattern, words: str = "", indexed: bool = False, **extra):
        super().__init__(items, pattern, **extra)
        self.words = words
        self.indexed = indexed

    def _parts(self, compiler, connection):
        items, pattern = self.get_source_expressions()
        items_sql, items_params = compiler.compile(items)
        pattern_sql, pattern_params = compiler.compile(pattern)
        return items_sql, tuple(items_params), pattern_sql, tuple(pattern_params)

    def as_sql(self, compiler, connection, **extra_context):  # SQLite (and its like)
        items, items_params, pattern, pattern_params = self._parts(compiler, connection)
        # The column and a placeholder compiled by Django: the term is a parameter.
        sql = (
            f"EXISTS (SELECT 1 FROM json_each({items}) WHERE json_extract(value, '$.name') LIKE {pattern} ESCAPE '\\')"  # noqa: S608, E501
        )
        return sql, (*items_params, *pattern_params)

    def as_postgresql(self, compiler, connection, **extra_context):
        items, items_params, pattern, pattern_params = self._parts(compiler, connection)
        if self.words:
            # A parameter too: letters, digits and spaces, nothing a regular expression or a path reads.
            path = f'$[*].name ? (@ like_regex "{self.words}" flag "i")'
            exact, exact_params = f"jsonb_path_exists({items}, %s::jsonpath)", (*items_params, path)
        else:
            # The items are a list (receipts.validation); anything else has no item named so.
            elements = f"jsonb_array_elements(CASE WHEN jsonb_typeof({items}) = 'array' THEN {items} END)"
            exact = f"EXISTS (SELECT 1 FROM {elements} AS item WHERE item ->> 'name' ILIKE {pattern})"  # noqa: S608 (as above)
            exact_params = (*items_params, *items_params, *pattern_params)
        if not self.indexed:
            return exact, exact_params
        # The names as one text, as the trigram index holds them, narrow the rows to read
        # (an index look-up); the exact test then reads only those.
        names = ITEM_NAMES.format(items=items)
        return f"({names} ILIKE {pattern} AND {exact})", (*items_params, *pattern_params, *exact_params)


_WORDS = re.compile(r"[^\W_]+(?: [^\W_]+)*")


def _item(text: str) -> Q | None:
    if len(text) < ITEM_TERM_MIN or not any(c.isalpha() for c in text):
        return None
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    words = text if _WORDS.fullmatch(text) else ""
    # In the names' JSON text a quote, a backslash and a control character are escaped: a
    # term holding one is not found there as typed, so it reads every sale of the shop.
    indexed = not any(c in '"\\' or not c.isprintable() for c in text)
    return Q(ItemNamed(F("items"), Value(f"%{escaped}%"), words=words, indexed=indexed))


def why(receipt: Receipt, text: str, items: bool = False) -> str:
    """Why ``text`` found ``receipt`` (one on the page shown), as the list shows it: "item:
    Jollof rice (plate)", "card •••• 4242", "phone +234*******89" (masked as the dashboard
    masks contacts), "total ₦4,242.00", "code"; each reading that matched, joined; "" when
    none does (a day or a receipt number, which the row shows itself)."""
    text = text.strip()
    found = []
    if (_code(text) is not None and receipt.short_code == text.upper()) or receipt.token == text:
        found.append("code")
    if _amount(text) is not None and _amount_matches(receipt, text):
        found.append(f"total {format_amount(receipt.total_amount, receipt.currency)}")
    last4 = _LAST4.match(text)
    card = receipt.detail("payment_details") or {}
    if last4 and isinstance(card, dict) and card.get("card_last4") == last4[1]:
        found.append(f"card •••• {last4[1]}")
    if "@" in text and receipt.customer_email:
        try:
            if normalize_email(text).lower() == receipt.customer_email.lower():
                found.append(f"email {mask_email(receipt.customer_email)}")
        except ValueError:
            pass
    if _phone(text) is not None and receipt.customer_phone and _phone(text) == Q(customer_phone=receipt.customer_phone):
        found.append(f"phone {mask_phone(receipt.customer_phone)}")
    if items and _item(text) is not None:
        names = [str(item.get("name", "")) for item in receipt.items or [] if isinstance(item, dict)]
        matched = [name for name in names if text.casefold() in name.casefold()]
        if matched:
            found.append("item: " + ", ".join(dict.fromkeys(matched)))
    return "; ".join(found)


def _amount_matches(receipt: Receipt, text: str) -> bool:
    amount = typed_amount(text)
    digits = next((d for d, codes in digits_of_currencies().items() if receipt.currency in codes), 2)
    return amount is not None and to_minor(amount, digits) == receipt.total_amount


# A search counts the sales it found up to this many: past it, the list says "more than".
COUNTED = 1000


class SearchPaginator(Paginator):
    """The pages of a search's results, which counts them only up to COUNTED (one more, to
    know there are more): a word of a popular item finds a quarter of a busy shop's sales,
    and counting them all would cost more than the page itself (bench/search.py)."""

    @cached_property
    def count(self) -> int:
        return self.object_list[: COUNTED + 1].count()

    @property
    def more_than(self) -> int | None:
        """COUNTED when the search found more sales than it counts, else None."""
        return COUNTED if self.count > COUNTED else None
