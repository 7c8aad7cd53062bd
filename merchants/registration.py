"""A business's registration number at Nigeria's Corporate Affairs Commission (CAC), as a
VAT invoice states it (Nigeria Tax Act 2025, s.153): ``RC`` and digits for a company,
``BN`` for a business name, ``IT`` for incorporated trustees. People write it ``RC
1234567``, ``rc-1234567`` or ``RC: 1234567``; it is kept in one form, ``RC1234567``."""

import re

from django.core.exceptions import ValidationError

PREFIXES = ("RC", "BN", "IT")
_FORM = re.compile(r"(?:RC|BN|IT)[0-9]{1,9}")
# What people put between the prefix and the digits, or around them.
_SEPARATORS = re.compile(r"[\s.:/\-\u2010-\u2015]+")
INVALID = "Enter a CAC registration number: RC, BN or IT followed by its digits, such as RC1234567."


def normalize_registration_number(value: str) -> str:
    """``rc 1234567`` -> ``RC1234567``: capitals, separators left out. Returns what it
    cannot read as it was given (trimmed), for the validator to refuse."""
    compact = _SEPARATORS.sub("", value or "").upper()
    return compact if _FORM.fullmatch(compact) else (value or "").strip()


def validate_registration_number(value: str) -> None:
    """Raise ValidationError unless ``value`` is a normalized CAC number (RC, BN or IT and
    1 to 9 digits)."""
    if not _FORM.fullmatch(value):
        raise ValidationError(INVALID, code="invalid")
