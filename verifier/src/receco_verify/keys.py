"""Ed25519 public keys as a JWK Set (RFC 8037: ``kty`` OKP, ``crv`` Ed25519) and their ids.

A key's ``kid`` is its RFC 7638 JWK thumbprint (SHA-256, base64url without padding): anyone
can recompute it from the key itself, so a published ``kid`` cannot name another key.
"""

import base64
import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


class KeySetError(ValueError):
    """A JWK or JWK Set that is not an Ed25519 public key set."""


def b64url(data: bytes) -> str:
    """base64url without padding, as JOSE writes binary values."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes of a base64url value, padded or not. Raises ValueError on bad input."""
    if not isinstance(text, str):
        raise ValueError("not a base64url string")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def raw_public(key: Ed25519PublicKey) -> bytes:
    """The 32 bytes of an Ed25519 public key."""
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def thumbprint(public: bytes) -> str:
    """The RFC 7638 thumbprint of the Ed25519 key ``public`` (32 bytes): its ``kid``."""
    members = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": b64url(public)}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(members.encode("ascii")).digest())


@dataclass(frozen=True)
class PublicKey:
    """One published Ed25519 public key."""

    kid: str
    public: bytes

    def verify(self, signature: bytes, message: bytes) -> bool:
        """Whether ``signature`` is this key's Ed25519 signature of ``message``."""
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def jwk(self) -> dict:
        """The key as an RFC 8037 JWK."""
        return {"kty": "OKP", "crv": "Ed25519", "x": b64url(self.public), "kid": self.kid, "alg": "EdDSA", "use": "sig"}


def from_jwk(jwk: dict) -> PublicKey:
    """The Ed25519 public key of one JWK.

    Raises KeySetError when it is not an OKP/Ed25519 public key, or its ``kid`` is not its
    thumbprint.
    """
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise KeySetError("not an Ed25519 key (kty OKP, crv Ed25519)")
    if "d" in jwk:
        raise KeySetError("a private key: publish and pass only public keys")
    try:
        public = unb64url(jwk["x"])
    except (KeyError, ValueError):
        raise KeySetError("the key has no valid x") from None
    if len(public) != 32:
        raise KeySetError(f"an Ed25519 public key has 32 bytes, not {len(public)}")
    kid = thumbprint(public)
    if jwk.get("kid", kid) != kid:
        raise KeySetError(f"the kid {jwk.get('kid')!r} is not the key's thumbprint {kid!r}")
    return PublicKey(kid, public)


def load_jwks(document: dict) -> dict[str, PublicKey]:
    """The Ed25519 keys of a JWK Set, by kid; keys of other types are skipped.

    Raises KeySetError when the set is malformed or holds no Ed25519 key.
    """
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise KeySetError('a JWK Set is an object with a "keys" list')
    found = {}
    for jwk in document["keys"]:
        if isinstance(jwk, dict) and (jwk.get("kty"), jwk.get("crv")) != ("OKP", "Ed25519"):
            continue
        key = from_jwk(jwk)
        found[key.kid] = key
    if not found:
        raise KeySetError("the JWK Set holds no Ed25519 key")
    return found
