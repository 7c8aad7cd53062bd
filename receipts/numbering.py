"""Receipt numbers: every receipt (a sale, a refund) takes the next number of its series,
with no gaps and no repeats, as a VAT invoice must be numbered (Nigeria Tax Act 2025,
s.153).

A series is named by what comes before the number, and the number is six digits or more:

- ``MP-2026-000123``: a merchant's series, its prefix (merchants.numbering) and the year
  of issue in its time zone, so each year starts again at 1;
- ``MP-TILL3-2026-000045``: a sale that names its till (``terminal_id``, its letters and
  digits in capitals) is numbered in that till's own series, so that busy tills do not
  wait on each other;
- ``TEST-MP-2026-000007``: test receipts are numbered apart, so that the live series has
  no gap where a test went.

Refunds are numbered in their merchant's series (a refund names no till). The writer
(receipts.writer) draws the number in the statement, or the transaction, that inserts
the receipt: a receipt that is not stored gives its number back. Neither prefixes nor
till codes hold a dash, so two series never read alike. Receipts stored before numbering
existed have none.
"""

import re
import zoneinfo
from datetime import datetime

from django.utils import timezone

from merchants.models import Merchant
from merchants.numbering import TEST_PREFIX

TERMINAL_ID_MAX_LENGTH = 32
DIGITS = 6
NO_TERMINAL_CODE = "Must hold a letter or a digit: it names the till in the receipt number"
_NOT_CODE = re.compile(r"[^A-Za-z0-9]")


def terminal_code(terminal_id: str | None) -> str:
    """The till's part of a receipt number: ``Till 3`` -> ``TILL3``; "" for none."""
    return _NOT_CODE.sub("", terminal_id or "").upper()


def series_name(merchant: Merchant, *, livemode: bool, terminal_id: str | None = None, now: datetime | None = None):
    """The series a receipt of ``merchant`` issued ``now`` is numbered in: ``MP-2026``,
    ``MP-TILL3-2026`` for a till, ``TEST-`` before either for a test receipt."""
    moment = now or timezone.now()
    try:
        year = moment.astimezone(zoneinfo.ZoneInfo(merchant.time_zone)).year
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):  # a zone the validators would refuse
        year = moment.year
    parts = [merchant.number_prefix, terminal_code(terminal_id), str(year)]
    if not livemode:
        parts.insert(0, TEST_PREFIX)
    return "-".join(part for part in parts if part)


def digits_sql(column: str) -> str:
    """The digits ``receipt_number`` prints for the number in ``column``, in PostgreSQL's
    SQL: for a statement that writes the number into text before Python sees it (the
    event of a new sale, webhooks.events)."""
    return f"lpad({column}::text, greatest({DIGITS}, length({column}::text)), '0')"


def receipt_number(series: str | None, number: int | None) -> str | None:
    """``MP-2026-000123``: a receipt's number as it is printed; None for an unnumbered one."""
    if series is None or number is None:
        return None
    return f"{series}-{number:0{DIGITS}d}"
