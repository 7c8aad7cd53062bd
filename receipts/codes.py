"""Receipt tokens and short codes: their formats, generation and parsing."""

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
BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

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


def new_short_code() -> str:
    """Return a random 6-character short code from the unambiguous alphabet."""
    return "".join(secrets.choice(SHORT_CODE_ALPHABET) for _ in range(SHORT_CODE_LENGTH))


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
