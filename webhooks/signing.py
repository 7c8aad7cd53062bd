"""Webhook signatures, as Stripe makes them.

``Receco-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, one
``v1=`` per secret that signs (two during a secret's roll). The receiver recomputes the
HMAC with its secret, compares in constant time, and refuses a ``t`` too far from its
clock (docs/webhooks.md).
"""

import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
HEADER = "Receco-Signature"
EVENT_ID_HEADER = "Receco-Event-Id"


def new_secret() -> str:
    """A fresh signing secret: ``whsec_`` and 32 random bytes in URL-safe base64 (43 characters)."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of ``"<timestamp>.<body>"`` keyed with ``secret``."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def verify(secret: str, header: str, body: bytes, now: float, tolerance: int = 300) -> bool:
    """Whether ``header`` (a Receco-Signature value) signs ``body`` with ``secret`` at a time
    within ``tolerance`` seconds of ``now``: what a receiver checks, on the raw body."""
    try:
        parts = [part.split("=", 1) for part in header.split(",")]
        timestamp = int(dict(parts)["t"])
    except (KeyError, ValueError):
        return False
    expected = signature(secret, timestamp, body)
    signed = any(name == "v1" and hmac.compare_digest(value, expected) for name, value in parts)
    return signed and abs(now - timestamp) <= tolerance


def signature_header(secrets_: list[str], timestamp: int, body: bytes) -> str:
    """The Receco-Signature value: ``t=<timestamp>`` and a ``v1=`` for each secret, in order."""
    return ",".join([f"t={timestamp}", *(f"v1={signature(secret, timestamp, body)}" for secret in secrets_)])
