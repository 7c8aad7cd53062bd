"""Receipt tokens and short codes: their formats, generation and parsing."""

import hashlib
import re
import secrets
import time
from dataclasses import dataclass

from receco.errors import InvalidInput

# The forms of a receipt's two names, declared here only: the validators, the models, the
# OpenAPI document and the messages read them, and tests hold docs/ to them.
TOKEN_MIN_LENGTH = 8
TOKEN_MAX_LENGTH = 64
TOKEN_CHARACTERS = "A-Za-z0-9_-"
SHORT_CODE_LENGTH = 6
SHORT_CODE_CHARACTERS = "A-Z0-9"

TOKEN_PATTERN = f"[{TOKEN_CHARACTERS}]{{{TOKEN_MIN_LENGTH},{TOKEN_MAX_LENGTH}}}"
SHORT_CODE_PATTERN = f"[{SHORT_CODE_CHARACTERS}]{{{SHORT_CODE_LENGTH}}}"
TOKEN_RE = re.compile(f"^{TOKEN_PATTERN}$")
SHORT_CODE_RE = re.compile(f"^{SHORT_CODE_PATTERN}$")

# The same forms in words, for messages and the OpenAPI document's descriptions.
TOKEN_FORM = f"{TOKEN_MIN_LENGTH} to {TOKEN_MAX_LENGTH} of A-Z a-z 0-9 _ -"
SHORT_CODE_FORM = f"{SHORT_CODE_LENGTH} of A-Z 0-9"
TOKEN_FORM_MESSAGE = f"Must be {TOKEN_MIN_LENGTH} to {TOKEN_MAX_LENGTH} letters, digits, '_' or '-'."
SHORT_CODE_FORM_MESSAGE = f"Must be {SHORT_CODE_LENGTH} letters or digits."

# Generated short codes leave out 0/O and 1/I/L, which customers mistype from a till
# printout; any [A-Z0-9]{6} code a POS supplies is still accepted.
SHORT_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
# Short codes that begin with a digit are kept for the codes derived from their token
# (``derived_short_code``): what an offline till prints is then no code anyone else may ask
# for. The service's own codes begin with a letter.
DERIVED_FIRST = "23456789"
_SERVICE_FIRST = "".join(c for c in SHORT_CODE_ALPHABET if c.isalpha())
BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

# A token made offline by a merchant's agent with its API key: the spec's form, then the
# key's public lookup id and a MAC of both under the key's token secret
# (merchants.keys.token_secret), e.g. rcpt_mi0v3k2p_q8z0lp_3kTq9ZxW1bNa0a1b2c3d4e5f6g7h.
SIGNED_TOKEN_RE = re.compile(
    r"^(?P<body>rcpt_[0-9a-z]{1,13}_[0-9a-z]{6})_(?P<lookup>[0-9A-Za-z]{12})(?P<mac>[0-9a-z]{16})$"
)

INVALID_TOKEN = "Invalid token format"


def base36(number: int) -> str:
    """Return a non-negative integer in lowercase base 36."""
    digits = []
    while True:
        number, rest = divmod(number, 36)
        digits.append(BASE36[rest])
        if not number:
            return "".join(reversed(digits))


def new_token() -> str:
    """Return a fresh token of the form ``rcpt_<base36 ms timestamp>_<6 random base36>``."""
    random_part = "".join(secrets.choice(BASE36) for _ in range(6))
    return f"rcpt_{base36(time.time_ns() // 1_000_000)}_{random_part}"


# How many codes ``new_short_code`` draws from: a letter, then five of the alphabet.
_SERVICE_CODES = len(_SERVICE_FIRST) * len(SHORT_CODE_ALPHABET) ** (SHORT_CODE_LENGTH - 1)


def new_short_code() -> str:
    """Return a random 6-character short code from the unambiguous alphabet, beginning with
    a letter (those beginning with a digit are derived ones: ``derived_short_code``).

    One draw of a number below the count of such codes, written in their digits: as
    uniform as drawing each character, for a sixth of the calls to the system's random
    source (every sale draws one)."""
    number, first = divmod(secrets.randbelow(_SERVICE_CODES), len(_SERVICE_FIRST))
    code = [_SERVICE_FIRST[first]]
    for _ in range(SHORT_CODE_LENGTH - 1):
        number, rest = divmod(number, len(SHORT_CODE_ALPHABET))
        code.append(SHORT_CODE_ALPHABET[rest])
    return "".join(code)


def derived_short_code(token: str) -> str:
    """The short code that belongs to ``token``: SHA-256 of it read as a number, a digit of
    DERIVED_FIRST, then five characters of SHORT_CODE_ALPHABET. Anyone can work it out, so
    an offline till prints it before the sale is uploaded; a requested code that begins with
    a digit is taken only when it is its token's (receipts.claims)."""
    number = int.from_bytes(hashlib.sha256(b"receco/short-code/v1:" + token.encode()).digest()[:8], "big")
    number, rest = divmod(number, len(DERIVED_FIRST))
    code = [DERIVED_FIRST[rest]]
    for _ in range(SHORT_CODE_LENGTH - 1):
        number, rest = divmod(number, len(SHORT_CODE_ALPHABET))
        code.append(SHORT_CODE_ALPHABET[rest])
    return "".join(code)


def is_derived_form(code: str) -> bool:
    """Whether ``code`` is of the kind kept for codes derived from a token (it begins with a digit)."""
    return code[:1].isdigit()


@dataclass(frozen=True)
class Reference:
    """A parsed receipt reference: which unique column to look in, and for what."""

    field: str
    value: str

    @property
    def is_short_code(self) -> bool:
        """Short codes can be guessed (6 characters); tokens, which QR codes hold, cannot."""
        return self.field == "short_code"


def parse_reference(raw: object) -> Reference:
    """Read what a customer or POS sent as ``token``: a long token or a short code.

    Short codes are trimmed and uppercased (``k7p2qx `` finds ``K7P2QX``); tokens
    are trimmed and otherwise case-sensitive. Both are ASCII before and after: Unicode
    case mapping would read ``ſſſſſſ`` as ``SSSSSS``. Raises InvalidInput otherwise.
    """
    if not isinstance(raw, str) or not raw.isascii():
        raise InvalidInput(INVALID_TOKEN)
    value = raw.strip()
    if len(value) == SHORT_CODE_LENGTH and SHORT_CODE_RE.match(value.upper()):
        return Reference("short_code", value.upper())
    if TOKEN_RE.match(value):
        return Reference("token", value)
    raise InvalidInput(INVALID_TOKEN)
