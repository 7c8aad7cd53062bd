"""The service's canonical bytes of signed content: receco_verify.canonical's (RFC 8785),
written faster, for the log's appender signs thousands of receipts a second.

orjson writes the content with its keys sorted; its bytes are the canonical form whenever
nothing in them is where orjson and RFC 8785 part ways, which a few byte searches tell:

- a key beyond U+D7FF sorts by code point in orjson, by UTF-16 code unit in RFC 8785: any
  character from U+D000 up (its UTF-8 starts with a byte 0xED or more) takes the slow path;
- a whole float (``7.0``) or one in exponent form (``1e-06``, ``1e+16``) is written
  otherwise by ECMAScript: any ``.0`` closing a number, or an ``e`` outside the strings,
  takes the slow path; between those, orjson and ECMAScript both write the shortest
  digits that read back as the same float;
- an integer beyond 2**53 has no canonical form (orjson refuses it: OPT_STRICT_INTEGER);
- a backslash (an escaped quote, control character or backslash in a string) takes the
  slow path, so that splitting at the quotes finds every string;
- what orjson writes but does not read back as it was takes the slow path: a float that
  is not finite (orjson writes null), anything but JSON's own types (a tuple, a UUID).

The slow path is receco_verify.canonical.canonicalize, which also refuses what has no
canonical form. tests/receco/lib/test_canonical.py holds the two to the same bytes.
"""

import orjson
from receco_verify.canonical import canonicalize as _reference

# Anything but JSON's own types (str, int, float, bool, None, list, dict) goes to the
# reference, which canonicalizes or refuses it as the verifier does.
_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_BELOW_U_D000 = bytes(range(0xED))


def canonicalize(value) -> bytes:
    """The RFC 8785 bytes of ``value`` (UTF-8), the same as receco_verify.canonical's.

    Raises receco_verify.canonical.CanonicalFormError when ``value`` cannot be canonicalized.
    """
    try:
        written = orjson.dumps(value, option=_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        return _reference(value)
    if (
        written[:1] not in (b"{", b"[")  # a lone number has nothing around it to search for
        or b"\\" in written
        or (not written.isascii() and written.translate(None, _BELOW_U_D000))
    ):
        return _reference(value)
    # Outside the strings there are only numbers, literals and punctuation.
    bare = b"".join(written.split(b'"')[::2])
    whole = b".0," in bare or b".0]" in bare or b".0}" in bare
    numbers = bare.replace(b"true", b"").replace(b"false", b"")
    if whole or b"e" in numbers or b"E" in numbers:
        return _reference(value)
    if orjson.loads(written) != value:  # a float orjson wrote as null, a tuple, a UUID...
        return _reference(value)
    return written
