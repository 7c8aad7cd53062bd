"""The canonical form of signed content: RFC 8785, the JSON Canonicalization Scheme (JCS).

Keys sorted by their UTF-16 code units, no whitespace, strings escaped minimally, numbers as
ECMAScript prints them. Receipts hold only integers (minor units), strings, booleans, null,
lists and objects, so every JCS implementation (a browser's included) agrees on the bytes.
"""

import rfc8785


class CanonicalFormError(ValueError):
    """The value has no canonical form (a float that is not finite, an integer beyond 2**53,
    a key that is not a string)."""


def canonicalize(value) -> bytes:
    """The RFC 8785 bytes of ``value`` (UTF-8).

    Raises CanonicalFormError when ``value`` cannot be canonicalized.
    """
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as error:
        raise CanonicalFormError(str(error)) from error
