"""Receipt tokens and short codes, made by the agent so that the receipt URL, QR code and
short code are valid before the service has seen the sale.

A token the agent makes with an API key carries proof of its merchant: a MAC keyed by a
secret derived from that key, which the service stores too when it makes the key. So a
token printed on a till offline cannot be claimed by another merchant, who cannot make
the MAC. The short code is derived from the token, so it cannot be claimed apart from it.
The scheme (version 1):

- secret ``S = HMAC-SHA256(key=api_key, msg=b"receco/agent-token/v1")``;
- ``body = rcpt_<base-36 ms timestamp>_<6 random base-36>``, the specification's form;
- ``lookup`` = the key's 12-character lookup id (after ``postest_`` or ``poslive_``);
- ``mac`` = the first 10 bytes of ``HMAC-SHA256(S, f"{body}_{lookup}")`` as a big-endian
  number in base 36, left-padded with ``0`` to 16 characters;
- token = ``f"{body}_{lookup}{mac}"`` (49 characters until 2059); without a key, ``body``;
- short code of any token: the first 8 bytes of ``SHA-256(b"receco/short-code/v1:" +
  token)`` as a big-endian number ``n``; ``n, r = divmod(n, 8)`` gives the first character,
  ``DERIVED_FIRST[r]`` (a digit), then five times ``n, r = divmod(n, 31)`` gives
  ``SHORT_CODE_ALPHABET[r]``, in the order produced. The service keeps the codes that begin
  with a digit for the codes derived from their own token (its own begin with a letter), so
  no other sale can ask for the code a till printed.

tests/agent/test_tokens.py holds test vectors of the scheme; tests/agent/test_service_rules.py
holds it to the service's (merchants.keys.token_secret, receipts.claims, receipts.codes).
"""

import functools
import hashlib
import hmac
import secrets
import time

BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# No 0/O, 1/I/L: customers type the short code from a paper slip.
SHORT_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
SHORT_CODE_LENGTH = 6
# The first character of a derived short code: the digits of SHORT_CODE_ALPHABET.
DERIVED_FIRST = "23456789"
TOKEN_SECRET_MESSAGE = b"receco/agent-token/v1"
SHORT_CODE_PREFIX = b"receco/short-code/v1:"
KEY_PREFIX_LENGTH = len("postest_")
LOOKUP_LENGTH = 12
MAC_BYTES = 10
MAC_LENGTH = 16  # base-36 characters of MAC_BYTES, padded: 36**16 > 2**80


def to_base36(number: int) -> str:
    """Return the lowercase base-36 spelling of a non-negative integer."""
    if number < 0:
        raise ValueError("negative numbers have no base-36 spelling here")
    digits = []
    while True:
        number, rest = divmod(number, 36)
        digits.append(BASE36[rest])
        if number == 0:
            return "".join(reversed(digits))


@functools.lru_cache(maxsize=8)  # one key per agent: derived once, not for every sale
def token_secret(api_key: str) -> bytes:
    """Return the 32-byte token secret of ``api_key`` (the service stores the same value)."""
    return hmac.new(api_key.encode(), TOKEN_SECRET_MESSAGE, hashlib.sha256).digest()


def sign(body: str, api_key: str) -> str:
    """Return the signed token of ``body`` (``rcpt_<ts36>_<rand6>``) made with ``api_key``."""
    lookup = api_key[KEY_PREFIX_LENGTH : KEY_PREFIX_LENGTH + LOOKUP_LENGTH]
    digest = hmac.new(token_secret(api_key), f"{body}_{lookup}".encode(), hashlib.sha256).digest()
    mac = to_base36(int.from_bytes(digest[:MAC_BYTES], "big")).rjust(MAC_LENGTH, "0")
    return f"{body}_{lookup}{mac}"


def new_token(api_key: str | None = None, now_ms: int | None = None) -> str:
    """Return a fresh token: signed with ``api_key`` when there is one, else the plain
    ``rcpt_<base36 ms timestamp>_<6 random base36>``, which carries no proof of its merchant."""
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    suffix = "".join(secrets.choice(BASE36) for _ in range(6))
    body = f"rcpt_{to_base36(now_ms)}_{suffix}"
    return sign(body, api_key) if api_key else body


def short_code_for(token: str) -> str:
    """Return the short code derived from ``token``: a digit of DERIVED_FIRST, then 5
    characters of SHORT_CODE_ALPHABET."""
    number = int.from_bytes(hashlib.sha256(SHORT_CODE_PREFIX + token.encode()).digest()[:8], "big")
    number, rest = divmod(number, len(DERIVED_FIRST))
    characters = [DERIVED_FIRST[rest]]
    for _ in range(SHORT_CODE_LENGTH - 1):
        number, rest = divmod(number, len(SHORT_CODE_ALPHABET))
        characters.append(SHORT_CODE_ALPHABET[rest])
    return "".join(characters)
