"""Made-up receipts for demos and benchmarks (the ``seedreceipts`` command): what they hold
and, on PostgreSQL, the one statement that makes millions of them in the database itself.

A seeded receipt is a completed sale of one to five items from a small catalogue, some with
an inclusive VAT line, the card's brand and last four digits when paid by card, and for
some a customer's phone number or email address. Its token has the service's form (the
sale's time in milliseconds, then six base-36 characters), its short code the service's
alphabet beginning with a letter; both are unique by construction within one run (a
bijection of the receipt's counter), and checked against the receipts already stored.
Each receipt is numbered in its merchant's series of the year it was stored in
(receipts.numbering), gaplessly after what the series held, and the series' rows say the
last number given. Its fingerprint is ``sale_fingerprint`` of the sale it stands for.

Seeded receipts are ordinary rows: they go through no hook (no event, no delivery), and the
receipt log (ledger) does not hold them until an appender adds them (docs/scaling.md).
"""

from __future__ import annotations

import json
import random
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta

from merchants.colors import HOUSE_ACCENT_COLOR
from merchants.models import Merchant
from receipts.codes import BASE36, SHORT_CODE_ALPHABET, SHORT_CODE_LENGTH
from receipts.numbering import series_name

CATALOGUE = [
    ("Jollof rice (plate)", 250000),
    ("Fried plantain", 80000),
    ("Suya (100 g)", 150000),
    ("Chapman", 120000),
    ("Bottled water 75cl", 30000),
    ("Peak milk 400 g", 310000),
    ("Indomie noodles (carton)", 1150000),
    ("Golden Penny semovita 1 kg", 180000),
    ("Dangote sugar 500 g", 95000),
    ("Palm oil 1 L", 220000),
    ("Bread (sliced)", 120000),
    ("Malt drink 33cl", 50000),
    ("Phone top-up", 100000),
    ("Ankara fabric (yard)", 350000),
]
PAYMENT_METHODS = ["card", "card", "card", "cash", "transfer", "ussd"]
CARD_BRANDS = ["Verve", "Mastercard", "Visa"]
LOCATIONS = ["Lekki Phase 1", "Ikeja City Mall", "Wuse 2, Abuja", "Yaba", "Victoria Island"]
VAT_RATE = 7.5  # Nigeria's VAT, a percentage, inside the prices when a receipt states it
VAT_SHARE = 0.4  # of the receipts that state their VAT
PHONE_SHARE = 0.2  # of the receipts sent to a phone number
EMAIL_SHARE = 0.1  # of the receipts sent to an email address
BASKETS = 2000  # distinct baskets a PostgreSQL run draws from
UPLOAD_DELAY = 120  # seconds at most between a sale and its receipt being stored

# Short codes begin with a letter (those beginning with a digit are derived from tokens:
# receipts.codes.derived_short_code); the counter's bijection spans all such codes.
LETTERS = "".join(c for c in SHORT_CODE_ALPHABET if c.isalpha())
_CODE_SPACE = len(LETTERS) * len(SHORT_CODE_ALPHABET) ** (SHORT_CODE_LENGTH - 1)
_TOKEN_SPACE = 36**6


def basket(rng: random.Random) -> dict:
    """A sale's items, total and, for some, its VAT line: the part of a sale that does not
    depend on when or where it was made."""
    items = []
    for name, price in rng.sample(CATALOGUE, rng.randint(1, 5)):
        quantity = rng.randint(1, 4)
        items.append({"name": name, "quantity": quantity, "unit_price": price, "total_price": price * quantity})
    total = sum(item["total_price"] for item in items)
    tax_lines = None
    if rng.random() < VAT_SHARE:
        taxable = round(total * 100 / (100 + VAT_RATE))
        tax_lines = [
            {
                "name": "VAT",
                "rate": VAT_RATE,
                "taxable_amount": taxable,
                "tax_amount": total - taxable,
                "inclusive": True,
            }
        ]
    return {"items": items, "total_amount": total, "tax_lines": tax_lines}


def extras(rng: random.Random, payment_method: str) -> dict:
    """The card and the customer's contact a sale may give."""
    card = None
    if payment_method == "card":
        card = {"card_brand": rng.choice(CARD_BRANDS), "card_last4": f"{rng.randrange(10000):04d}"}
    phone = f"+2348{rng.randrange(10**9):09d}" if rng.random() < PHONE_SHARE else None
    email = f"customer{rng.randrange(200000)}@example.com" if rng.random() < EMAIL_SHARE else None
    return {"payment_details": card, "customer_phone": phone, "customer_email": email}


# -- PostgreSQL: the receipts made by the database ---------------------------------------


@dataclass(frozen=True)
class Segment:
    """``count`` receipts of ``merchant`` stored between ``start`` and ``end``, all in the
    series ``series``, numbered from ``first_number``; ``counter`` is the run's counter of
    the first (tokens and short codes are made from it)."""

    merchant: Merchant
    series: str
    start: datetime
    end: datetime
    count: int
    counter: int
    first_number: int = 0


def segments(merchants: list[tuple[Merchant, int]], start: datetime, end: datetime) -> list[Segment]:
    """The segments of ``count`` receipts of each (merchant, count) stored evenly between
    ``start`` and ``end``: one per series, cut where the merchant's year turns."""
    found, counter = [], 0
    for merchant, count in merchants:
        cuts = [start, *_new_years(merchant, start, end), end]
        span = (end - start).total_seconds()
        given = 0
        for index, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
            last = index == len(cuts) - 2
            share = count - given if last else round(count * (b - a).total_seconds() / span)
            if share:
                livemode = not merchant.is_test
                found.append(Segment(merchant, series_name(merchant, livemode=livemode, now=a), a, b, share, counter))
                counter += share
                given += share
    return found


def _new_years(merchant: Merchant, start: datetime, end: datetime) -> list[datetime]:
    try:
        zone = zoneinfo.ZoneInfo(merchant.time_zone)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        zone = start.tzinfo
    years = range(start.astimezone(zone).year + 1, end.astimezone(zone).year + 1)
    return [datetime(year, 1, 1, tzinfo=zone) for year in years]


# Tokens and short codes are written in base 36 and base 31 three digits at a time, from a
# table of every three-digit string (seed_digits): a third of the arithmetic digit by digit.
_CHUNK = 3


def digit_tables() -> tuple[bytes, bytes]:
    """seed_digits' row: every three-digit string of base 36 and of the short-code alphabet."""

    def table(alphabet: str) -> bytes:
        n = len(alphabet)
        return "".join(alphabet[i // n**2] + alphabet[i // n % n] + alphabet[i % n] for i in range(n**_CHUNK)).encode()

    return table(BASE36), table(SHORT_CODE_ALPHABET)


def _base(value: str, digits: int, alphabet: str) -> str:
    """SQL for ``value`` (a bigint expression under 36**9) in ``digits`` digits of
    ``alphabet`` (BASE36 or SHORT_CODE_ALPHABET), as bytea."""
    n, column = len(alphabet), "b36" if alphabet == BASE36 else "b31"
    parts = []
    for end in range(digits, 0, -_CHUNK):
        width = min(_CHUNK, end)
        chunk = f"mod(({value}) / {n ** (digits - end)}, {n**width})"
        start = f"{chunk} * {_CHUNK} + {_CHUNK - width + 1}"
        # The table's value is TOASTed: the concatenation holds it in memory, once a statement.
        digits_table = f"(SELECT {column} || ''::bytea FROM seed_digits)"  # noqa: S608 (no value in it)
        parts.append(f"substring({digits_table} FROM ({start})::int FOR {width})")
    return f"convert_from({' || '.join(reversed(parts))}, 'UTF8')"


def _json(value) -> str:
    """As ``sale_fingerprint`` writes a value: json.dumps, keys sorted, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Generator:
    """The SELECT that makes the receipts of ``segments`` (temporary table seed_segment)
    from ``baskets`` (seed_basket), with the run's own scrambling of the counter."""

    total: int  # receipts made by the run
    token_factor: int
    token_offset: int
    code_factor: int
    code_offset: int

    @classmethod
    def new(cls, total: int, rng: random.Random) -> Generator:
        def coprime_to(space: int, primes: tuple[int, ...]) -> int:
            while True:
                factor = rng.randrange(space // 3, space)
                if all(factor % p for p in primes):
                    return factor

        return cls(
            total,
            coprime_to(_TOKEN_SPACE, (2, 3)),
            rng.randrange(_TOKEN_SPACE),
            coprime_to(_CODE_SPACE, (len(LETTERS), len(SHORT_CODE_ALPHABET))),
            rng.randrange(_CODE_SPACE),
        )

    def token_random(self, counter: str) -> str:
        return _base(f"mod(({counter}) * {self.token_factor} + {self.token_offset}, {_TOKEN_SPACE})", 6, BASE36)

    def short_code(self, counter: str) -> str:
        index = f"mod(({counter}) * {self.code_factor} + {self.code_offset}, {_CODE_SPACE})"
        rest = _base(f"{index} / {len(LETTERS)}", SHORT_CODE_LENGTH - 1, SHORT_CODE_ALPHABET)
        return f"substr('{LETTERS}', mod({index}, {len(LETTERS)})::int + 1, 1) || {rest}"

    def rows_sql(self) -> str:
        """SELECT every column of the receipts (the table's, then ``c``, the counter, and
        ``fp_head`` and ``fp_tail``, the fingerprinted sale around its token). Whatever is
        drawn at random is drawn once, in the inner query; the outer one writes it out."""
        methods, locations = PAYMENT_METHODS, LOCATIONS
        cards = ", ".join(str(index) for index, method in enumerate(methods, start=1) if method == "card")
        card = f"""CASE WHEN x.method IN ({cards}) THEN '{{"card_brand":"' || {_array(CARD_BRANDS)}[x.brand]
                    || '","card_last4":"' || x.last4 || '"}}' END"""
        sold_us = "(x.stored_us - x.delay_us)"  # the sale: its receipt was stored a little after
        sold = f"timestamp 'epoch' + {sold_us} * interval '1 microsecond'"
        draws = f"""
            SELECT s.*, s.counter + k AS c, k,
                s.start_us + ((k + random()) * s.step_us)::bigint AS stored_us,
                (random() * {UPLOAD_DELAY * 10**6})::bigint AS delay_us,
                mod((random() * {BASKETS})::int, {BASKETS}) AS basket,
                mod((random() * {len(methods)})::int, {len(methods)}) + 1 AS method,
                mod((random() * {len(locations)})::int, {len(locations)}) + 1 AS location,
                mod((random() * {len(CARD_BRANDS)})::int, {len(CARD_BRANDS)}) + 1 AS brand,
                lpad(mod((random() * 10000)::int, 10000)::text, 4, '0') AS last4,
                CASE WHEN random() < {PHONE_SHARE}
                    THEN '+2348' || lpad(mod((random() * 1e9)::bigint, 1000000000)::text, 9, '0') END AS phone,
                CASE WHEN random() < {EMAIL_SHARE}
                    THEN 'customer' || mod((random() * 200000)::int, 200000) || '@example.com' END AS email
            FROM seed_segment s, generate_series(0, s.count - 1) AS k
            OFFSET 0"""  # noqa: S608 (the module's constants, no value from outside)
        return f"""
            SELECT
                'rcpt_' || ltrim({_base(f"{sold_us} / 1000", 9, BASE36)}, '0')
                    || '_' || {self.token_random("x.c")} AS token,
                {self.short_code("x.c")} AS short_code,
                x.merchant_id, x.merchant_name, x.merchant_logo, x.accent_color,
                b.total_amount, 'NGN' AS currency,
                timestamptz 'epoch' + {sold_us} * interval '1 microsecond' AS transaction_date, b.items,
                'retail' AS category, {_array(methods)}[x.method] AS payment_method,
                {_array(locations)}[x.location] AS location, 'completed' AS status, x.livemode, false AS keyed,
                -- Built as jsonb, not parsed from text: the basket holds its VAT line ready.
                CASE WHEN x.method IN ({cards}) THEN coalesce(b.tax_details, '{{}}'::jsonb) || jsonb_build_object(
                        'payment_details', jsonb_build_object('card_brand', {_array(CARD_BRANDS)}[x.brand],
                        'card_last4', x.last4))
                    ELSE b.tax_details END AS details,
                NULL::bigint AS refund_of_id, x.email AS customer_email, x.phone AS customer_phone,
                NULL::varchar AS customer_phone_channel,
                x.series AS number_series, x.first_number + x.k AS number,
                timestamptz 'epoch' + x.stored_us * interval '1 microsecond' AS created_at,
                timestamptz 'epoch' + x.stored_us * interval '1 microsecond' AS updated_at,
                x.c,
                '{{"category":"retail","currency":"NGN","customer_email":' || coalesce('"' || x.email || '"', 'null')
                || ',"customer_phone":' || coalesce('"' || x.phone || '"', 'null')
                || ',"items":' || b.items_json || ',"location":' || {_array([_json(v) for v in locations])}[x.location]
                || ',"merchant_name":' || x.merchant_name_json || ',"merchant_string_id":' || x.string_id_json
                || coalesce(',"payment_details":' || {card}, '')
                || ',"payment_method":' || {_array([_json(v) for v in methods])}[x.method] || ',"status":"completed"'
                || coalesce(',"tax_lines":' || b.tax_lines_json, '') || ',"token":"' AS fp_head,
                '","total_amount":' || b.total_amount || ',"transaction_date":"'
                -- isoformat(): no fraction when the microseconds are none
                || CASE WHEN mod({sold_us}, 1000000) = 0 THEN to_char({sold}, 'YYYY-MM-DD"T"HH24:MI:SS')
                    ELSE to_char({sold}, 'YYYY-MM-DD"T"HH24:MI:SS.US') END || '+00:00"}}' AS fp_tail
            FROM ({draws}) x JOIN seed_basket b ON b.id = x.basket"""  # noqa: S608 (the module's constants)


def _array(values: list[str]) -> str:
    """A text[] literal of ``values`` (the module's own constants)."""
    quoted = ", ".join("'" + value.replace("'", "''") + "'" for value in values)
    return f"(ARRAY[{quoted}]::text[])"


def segment_rows(segment: Segment) -> tuple:
    """seed_segment's row of ``segment``."""
    merchant = segment.merchant
    span = segment.end - segment.start
    step = (span.days * 86400 + span.seconds) * 10**6 + span.microseconds
    return (
        merchant.pk,
        _json(merchant.string_id),
        merchant.name,
        _json(merchant.name),
        merchant.logo_url or None,
        merchant.accent_color or HOUSE_ACCENT_COLOR,
        not merchant.is_test,
        segment.series,
        segment.first_number,
        segment.count,
        segment.counter,
        round(segment.start.timestamp() * 10**6),
        step / segment.count,
    )


def basket_rows(rng: random.Random) -> list[tuple]:
    """seed_basket's rows: BASKETS baskets, each as stored and as fingerprinted, and the
    receipt's ``details`` of a basket with a VAT line paid otherwise than by card."""
    rows = []
    for index in range(BASKETS):
        made = basket(rng)
        tax_lines = made["tax_lines"]
        rows.append(
            (
                index,
                json.dumps(made["items"]),
                _json(made["items"]),
                made["total_amount"],
                _json(tax_lines) if tax_lines else None,
                json.dumps({"tax_lines": tax_lines}) if tax_lines else None,
            )
        )
    return rows


SEGMENT_TABLE = """CREATE TEMPORARY TABLE seed_segment (
    merchant_id bigint, string_id_json text, merchant_name text, merchant_name_json text, merchant_logo text,
    accent_color text, livemode boolean, series text, first_number bigint, count bigint, counter bigint,
    start_us bigint, step_us float8) ON COMMIT DROP"""
DIGITS_TABLE = "CREATE TEMPORARY TABLE seed_digits (b36 bytea, b31 bytea) ON COMMIT DROP"
BASKET_TABLE = """CREATE TEMPORARY TABLE seed_basket (
    id int PRIMARY KEY, items jsonb, items_json text, total_amount bigint, tax_lines_json text, tax_details jsonb)
    ON COMMIT DROP"""


def spread(days: int, now: datetime) -> tuple[datetime, datetime]:
    """When the receipts of a run spread over the past ``days`` days were stored."""
    return now - timedelta(days=days), now
