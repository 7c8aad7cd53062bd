"""The service's Ed25519 signing keys: the current private key and every public key still
published (retired ones included, so receipts signed before a rotation stay verifiable).

Read from RECECO_SIGNING_KEYS (a JWK Set, as JSON) or else the file RECECO_SIGNING_KEY_FILE
(the same JWK Set): exactly one key has its private part ``d`` (the current key), the
others are public only (retired). Never from the repository: ``manage.py makesigningkey``
writes a file outside it, or in ``.keys/`` (ignored by git and the image) for development.

No key configured: signing is off (``keyring()`` is None), which /readyz details and the
log's appender refuse to run without. A key configured but unreadable or malformed stops
the process at start-up (ImproperlyConfigured, naming the variable).
"""

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from receco_verify.keys import KeySetError, PublicKey, b64url, from_jwk, raw_public, thumbprint, unb64url

OFF_REASON = "off: no signing key configured (RECECO_SIGNING_KEYS or RECECO_SIGNING_KEY_FILE)"


@dataclass(frozen=True)
class Keyring:
    """The current signing key and every published public key, by kid."""

    current: Ed25519PrivateKey
    kid: str
    public: dict[str, PublicKey]

    def sign(self, message: bytes) -> bytes:
        """The current key's Ed25519 signature of ``message``."""
        return self.current.sign(message)

    @property
    def current_public(self) -> bytes:
        return self.public[self.kid].public

    def jwks(self) -> dict:
        """Every public key as a JWK Set (RFC 8037), the current one first."""
        ordered = [self.public[self.kid], *(key for kid, key in sorted(self.public.items()) if kid != self.kid)]
        return {"keys": [key.jwk() for key in ordered]}


def generate_jwk() -> dict:
    """A new Ed25519 private key as a JWK (with ``d``)."""
    private = Ed25519PrivateKey.generate()
    public = raw_public(private.public_key())
    seed = private.private_bytes_raw()
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(public), "d": b64url(seed), "kid": thumbprint(public)}


def parse(document: dict, source: str) -> Keyring:
    """The key ring of a JWK Set. Raises ImproperlyConfigured naming ``source``."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list) or not document["keys"]:
        raise ImproperlyConfigured(f'{source} must hold a JWK Set: {{"keys": [...]}} with at least one key')
    private_jwks = [jwk for jwk in document["keys"] if isinstance(jwk, dict) and "d" in jwk]
    if len(private_jwks) != 1:
        raise ImproperlyConfigured(
            f"{source} must hold exactly one private key (the current one, with d), not {len(private_jwks)}"
        )
    public = {}
    for jwk in document["keys"]:
        try:
            key = from_jwk(_public_part(jwk))
        except KeySetError as error:
            raise ImproperlyConfigured(f"{source}: {error}") from None
        public[key.kid] = key
    (current_jwk,) = private_jwks
    try:
        current = Ed25519PrivateKey.from_private_bytes(unb64url(current_jwk["d"]))
    except (TypeError, ValueError):
        raise ImproperlyConfigured(f"{source}: the private key's d is not a 32-byte Ed25519 key") from None
    kid = thumbprint(raw_public(current.public_key()))
    if kid != from_jwk(_public_part(current_jwk)).kid:
        raise ImproperlyConfigured(f"{source}: the private key's d does not match its x")
    return Keyring(current, kid, public)


@functools.cache
def keyring() -> Keyring | None:
    """The configured key ring, or None when signing is off. Raises ImproperlyConfigured when
    a key is configured but cannot be read."""
    inline = settings.RECECO_SIGNING_KEYS
    if inline:
        try:
            return parse(json.loads(inline), "RECECO_SIGNING_KEYS")
        except json.JSONDecodeError:
            raise ImproperlyConfigured("RECECO_SIGNING_KEYS is not JSON (a JWK Set)") from None
    path = settings.RECECO_SIGNING_KEY_FILE
    if not path:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        if settings.DEBUG and not os.environ.get("RECECO_SIGNING_KEY_FILE"):
            return None  # the development default, before `makesigningkey` made it
        raise ImproperlyConfigured(f"RECECO_SIGNING_KEY_FILE: no file at {path}") from None
    except OSError as error:
        raise ImproperlyConfigured(f"RECECO_SIGNING_KEY_FILE: cannot read {path}: {error.strerror}") from None
    try:
        return parse(json.loads(text), "RECECO_SIGNING_KEY_FILE")
    except json.JSONDecodeError:
        raise ImproperlyConfigured(f"RECECO_SIGNING_KEY_FILE: {path} is not JSON (a JWK Set)") from None


def _public_part(jwk):
    return {name: value for name, value in jwk.items() if name != "d"} if isinstance(jwk, dict) else jwk
