"""Merchants' NRS credentials encrypted at rest: the API key, the API secret and the
crypto keys file (einvoicing.models.EInvoicing), each sealed with Fernet (AES-128-CBC and
HMAC-SHA256, from ``cryptography``) under RECECO_EINVOICING_KEYS.

The first key seals; every key listed unseals (MultiFernet), so an operator rotates by
putting a new key first, then dropping the old key once every merchant's credentials
were saved again. Nothing here logs, and nothing decrypts a credential until the outbox sends
with it: pages and the audit trail only ever see the sealed text, or that it changed.
"""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

NO_KEYS = "RECECO_EINVOICING_KEYS is not set: the operator must set it before NRS credentials can be stored"
WRONG_KEYS = "The stored NRS credentials were sealed with a key RECECO_EINVOICING_KEYS no longer lists"


class VaultClosed(Exception):
    """No key to seal or unseal with, or none that opens what was sealed."""


def available() -> bool:
    """Whether credentials can be sealed (RECECO_EINVOICING_KEYS lists a key)."""
    return bool(settings.RECECO_EINVOICING_KEYS)


def _fernet() -> MultiFernet:
    if not available():
        raise VaultClosed(NO_KEYS)
    return MultiFernet([Fernet(key) for key in settings.RECECO_EINVOICING_KEYS])


def seal(text: str) -> str:
    """``text`` encrypted under the first key. Raises VaultClosed without keys."""
    return _fernet().encrypt(text.encode()).decode()


def unseal(token: str) -> str:
    """What ``token`` (from ``seal``) holds. Raises VaultClosed when no key listed opens it."""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise VaultClosed(WRONG_KEYS) from None
