"""The prefix of a merchant's receipt numbers, ``MP`` in ``MP-2026-000123``: what a
merchant may choose in the dashboard, and the one it has until it chooses (from its
merchant id). How the rest of the number is made is receipts.numbering."""

import re

from django.core.exceptions import ValidationError

MAX_LENGTH = 10
# Begins the number of every test receipt (receipts.numbering): no merchant's prefix.
TEST_PREFIX = "TEST"
_FORM = re.compile(r"[A-Z0-9]{1,10}")
INVALID = "Use 1 to 10 capital letters or digits, such as MP: no spaces or dashes."
RESERVED = "TEST begins the numbers of test receipts: choose another prefix."
# What a merchant id with no letter or digit to give (none can, today) is numbered with.
FALLBACK = "R"
DEFAULT_LENGTH = 6


def normalize_prefix(value: str) -> str:
    """``mp `` -> ``MP``: trimmed, in capitals (what the validator then judges)."""
    return (value or "").strip().upper()


def validate_prefix(value: str) -> None:
    """Raise ValidationError unless ``value`` is 1 to 10 capitals or digits, and not TEST."""
    if not _FORM.fullmatch(value):
        raise ValidationError(INVALID, code="invalid")
    if value == TEST_PREFIX:
        raise ValidationError(RESERVED, code="reserved")


def default_prefix(string_id: str) -> str:
    """The prefix of a merchant that chose none: the first letters and digits of its
    merchant id in capitals (``mama-put`` -> ``MAMAPU``)."""
    prefix = re.sub(r"[^A-Za-z0-9]", "", string_id).upper()[:DEFAULT_LENGTH]
    return prefix if prefix and prefix != TEST_PREFIX else FALLBACK
