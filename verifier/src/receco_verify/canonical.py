"""The canonical form of signed content: RFC 8785, the JSON Canonicalization Scheme (JCS).

Keys sorted by their UTF-16 code units, no whitespace, strings escaped minimally, numbers as
ECMAScript prints them. Receipts hold integers (minor units), strings, booleans, null, lists,
objects and the odd fraction (a tax rate of 7.5), so every JCS implementation (a browser's
included) agrees on the bytes.

The ``rfc8785`` package is the reference. The log signs thousands of receipts a second, so
values that the standard library's JSON encoder writes exactly as JCS does take that path:
keys with no character beyond U+D7FF (where UTF-16 and code point order agree), integers
within 2**53, and fractions between 1e-4 and 1e16 that are not whole (where Python's
shortest repr is ECMAScript's). Anything else goes to ``rfc8785``. tests/verifier holds the
two to the same bytes.
"""

import json

import rfc8785

_SAFE = 2**53
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False).encode


class CanonicalFormError(ValueError):
    """The value has no canonical form (a float that is not finite, an integer beyond 2**53,
    a key that is not a string)."""


def canonicalize(value) -> bytes:
    """The RFC 8785 bytes of ``value`` (UTF-8).

    Raises CanonicalFormError when ``value`` cannot be canonicalized.
    """
    try:
        if _plain(value):
            return _encode(value).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the reference says why
        pass
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as error:
        raise CanonicalFormError(str(error)) from error


def reference(value) -> bytes:
    """The RFC 8785 bytes of ``value`` from the reference implementation alone (for tests)."""
    return rfc8785.dumps(value)


def _plain(value) -> bool:
    """Whether the standard encoder writes ``value`` exactly as JCS does."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE < value < _SAFE
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (key and max(key) > "\ud7ff") or not _plain(item):
                return False
        return True
    if kind is list:
        return all(_plain(item) for item in value)
    # Whole floats print as 7.0 in Python, 7 in ECMAScript: those take the reference path.
    return kind is float and 1e-4 <= abs(value) < 1e16 and not value.is_integer()
