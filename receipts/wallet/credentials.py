"""The operator's wallet credentials, read from the settings once per process.

``apple()`` and ``google()`` return them, or None when that wallet is off: none of its
settings given. Some given and not all, or one that cannot be read or does not fit the
others, raise ImproperlyConfigured naming the variable (never its value): receipts.apps
reads both at start-up, so a deployment finds out before the first customer does.

A PEM given inline may have its line breaks written as ``\\n`` (one-line environment
files); a ``*_FILE`` setting names a file holding it instead.
"""

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

# Apple's forms: "pass.com.example.receipts", and a team id of 10 letters and digits.
_PASS_TYPE_ID = re.compile(r"pass(\.[A-Za-z0-9-]+)+")
_TEAM_ID = re.compile(r"[A-Z0-9]{10}")
_ISSUER_ID = re.compile(r"[0-9]{1,32}")


@dataclass(frozen=True)
class AppleWallet:
    """What signs a .pkpass: the Pass Type ID certificate and its key, and Apple's WWDR
    intermediate certificate that issued it (carried in the signature)."""

    pass_type_id: str
    team_id: str
    certificate: x509.Certificate
    key: SigningKey
    wwdr: x509.Certificate


@dataclass(frozen=True)
class GoogleWallet:
    """What signs a save link: the service account (its email is the JWT's issuer) and its
    key, for the Wallet issuer id; the origins the link may be used from."""

    issuer_id: str
    service_account: str
    key_id: str
    key: rsa.RSAPrivateKey
    origins: tuple[str, ...]


_APPLE = (
    "RECECO_APPLE_WALLET_PASS_TYPE_ID",
    "RECECO_APPLE_WALLET_TEAM_ID",
    "RECECO_APPLE_WALLET_CERTIFICATE",
    "RECECO_APPLE_WALLET_KEY",
    "RECECO_APPLE_WALLET_WWDR_CERTIFICATE",
)
_WITH_FILE = {
    "RECECO_APPLE_WALLET_CERTIFICATE",
    "RECECO_APPLE_WALLET_KEY",
    "RECECO_APPLE_WALLET_WWDR_CERTIFICATE",
    "RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT",
}
_GOOGLE = ("RECECO_GOOGLE_WALLET_ISSUER_ID", "RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT")


@functools.cache
def apple() -> AppleWallet | None:
    """Apple Wallet's credentials, or None when it is off. Raises ImproperlyConfigured."""
    if not _required(_APPLE, "Apple Wallet"):
        return None
    pass_type_id = settings.RECECO_APPLE_WALLET_PASS_TYPE_ID
    if not _PASS_TYPE_ID.fullmatch(pass_type_id):
        raise ImproperlyConfigured(
            "RECECO_APPLE_WALLET_PASS_TYPE_ID must be a Pass Type ID such as pass.com.example.receipts"
        )
    team_id = settings.RECECO_APPLE_WALLET_TEAM_ID
    if not _TEAM_ID.fullmatch(team_id):
        raise ImproperlyConfigured("RECECO_APPLE_WALLET_TEAM_ID must be a team id of 10 capital letters and digits")
    certificate = _certificate("RECECO_APPLE_WALLET_CERTIFICATE")
    wwdr = _certificate("RECECO_APPLE_WALLET_WWDR_CERTIFICATE")
    key = _key()
    if _public(key.public_key()) != _public(certificate.public_key()):
        raise ImproperlyConfigured("RECECO_APPLE_WALLET_KEY is not the key of RECECO_APPLE_WALLET_CERTIFICATE")
    # Apple writes the Pass Type ID into the certificate (as its UID): a pass signed with
    # another type's certificate is refused by Wallet, with no word of why.
    uid = certificate.subject.get_attributes_for_oid(NameOID.USER_ID)
    if uid and uid[0].value != pass_type_id:
        raise ImproperlyConfigured(
            f"RECECO_APPLE_WALLET_CERTIFICATE is for the Pass Type ID {uid[0].value}, "
            f"not RECECO_APPLE_WALLET_PASS_TYPE_ID={pass_type_id}"
        )
    if certificate.issuer != wwdr.subject:
        raise ImproperlyConfigured(
            "RECECO_APPLE_WALLET_WWDR_CERTIFICATE did not issue RECECO_APPLE_WALLET_CERTIFICATE: "
            "use the WWDR certificate its Issuer names (Apple has several generations, such as G4)"
        )
    return AppleWallet(pass_type_id, team_id, certificate, key, wwdr)


@functools.cache
def google() -> GoogleWallet | None:
    """Google Wallet's credentials, or None when it is off. Raises ImproperlyConfigured."""
    if not _required(_GOOGLE, "Google Wallet"):
        return None
    issuer_id = settings.RECECO_GOOGLE_WALLET_ISSUER_ID
    if not _ISSUER_ID.fullmatch(issuer_id):
        raise ImproperlyConfigured("RECECO_GOOGLE_WALLET_ISSUER_ID must be the issuer id, digits only")
    source, data = _value("RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT", pem=False)
    try:
        account = json.loads(data)
    except ValueError:
        raise ImproperlyConfigured(f"{source} is not JSON (a service account's key file)") from None
    if not isinstance(account, dict) or account.get("type") != "service_account":
        raise ImproperlyConfigured(f'{source} is not a service account\'s key file ("type": "service_account")')
    email, key_id, pem = (account.get(name) for name in ("client_email", "private_key_id", "private_key"))
    if not all(isinstance(value, str) and value for value in (email, key_id, pem)):
        raise ImproperlyConfigured(f"{source} must hold client_email, private_key_id and private_key")
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError):
        raise ImproperlyConfigured(f"{source}: its private_key is not an unencrypted PEM key") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ImproperlyConfigured(f"{source}: its private_key is not an RSA key (Google signs with RS256)")
    origins = tuple(settings.RECECO_GOOGLE_WALLET_ORIGINS)
    for origin in origins:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
            raise ImproperlyConfigured(
                f"RECECO_GOOGLE_WALLET_ORIGINS must list origins such as https://receipts.example.com, not {origin!r}"
            )
    return GoogleWallet(issuer_id, email, key_id, key, origins)


def forget(*, setting: str, **kwargs) -> None:
    """Read the credentials again after a test changes a wallet setting (setting_changed)."""
    if setting.startswith(("RECECO_APPLE_WALLET_", "RECECO_GOOGLE_WALLET_")):
        apple.cache_clear()
        google.cache_clear()


# --- helpers ------------------------------------------------------------------------


def _given(name: str) -> bool:
    return bool(getattr(settings, name) or (name in _WITH_FILE and getattr(settings, f"{name}_FILE")))


def _required(names: tuple[str, ...], wallet: str) -> bool:
    """Whether every one of ``names`` is given (False: none is). Raises ImproperlyConfigured
    naming the missing ones when some are given and not all."""
    missing = [name for name in names if not _given(name)]
    if len(missing) == len(names):
        return False
    if missing:
        raise ImproperlyConfigured(
            f"{wallet} passes need {', '.join(missing)} too (or none of {', '.join(names)}, to leave them off)"
        )
    return True


def _value(name: str, *, pem: bool = True) -> tuple[str, bytes]:
    """The setting ``name`` inline, else the file ``name``_FILE names: (the variable it
    came from, its bytes)."""
    inline = getattr(settings, name)
    if inline:
        return name, (inline.replace("\\n", "\n") if pem else inline).encode()
    path = getattr(settings, f"{name}_FILE")
    try:
        return f"{name}_FILE", Path(path).read_bytes()
    except OSError as error:
        raise ImproperlyConfigured(f"{name}_FILE: cannot read {path}: {error.strerror}") from None


def _certificate(name: str) -> x509.Certificate:
    """A certificate in PEM, or in DER (as Apple serves its WWDR certificates)."""
    source, data = _value(name)
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            return x509.load_pem_x509_certificate(data)
        return x509.load_der_x509_certificate(data)
    except ValueError:
        raise ImproperlyConfigured(f"{source} is not a certificate (PEM or DER)") from None


def _key() -> SigningKey:
    source, data = _value("RECECO_APPLE_WALLET_KEY")
    password = settings.RECECO_APPLE_WALLET_KEY_PASSWORD.encode() or None
    try:
        key = serialization.load_pem_private_key(data, password=password)
    except TypeError:
        # Encrypted without a password given, or a password given for a key without one.
        raise ImproperlyConfigured(
            f"{source}: RECECO_APPLE_WALLET_KEY_PASSWORD must be set exactly when the key is encrypted"
        ) from None
    except ValueError:
        raise ImproperlyConfigured(f"{source} is not a PEM private key, or its password is wrong") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise ImproperlyConfigured(f"{source} must be an RSA or EC key")
    return key


def _public(key) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
