"""The NRS QR code of a reported receipt, made here as NRS's guide describes it ("IRN
Signing"): the IRN and the moment it was stamped (``<IRN>.<unix time>``) with the
taxpayer's certificate, as JSON, encrypted with the public key of the taxpayer's
``crypto_keys.txt`` (RSA with PKCS #1 v1.5 padding, which is what the guide's
``openssl pkeyutl -encrypt`` does), base64-encoded. NRS's own app decrypts and checks it;
nobody else can read it. The receipt's own signed content is untouched: the IRN and this
code are kept beside it (einvoicing.models.Report).

crypto_keys.txt, downloaded from the taxpayer's NRS dashboard, is read in the two forms
public descriptions give it: a PEM public key followed by the certificate (the guide's),
or a JSON object with ``public_key`` (PEM, or PEM in base64) and ``certificate``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from receco.lib import qr

_PUBLIC_KEY = re.compile(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", re.S)
_CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", re.S)
# PKCS #1 v1.5 encryption takes at most the key's size in bytes less 11.
_PADDING_BYTES = 11
# The longest IRN the service makes: a receipt number of a 10-character prefix, a 32-character
# till code, the year and 10 digits (receipts.numbering), the service id and the date.
_LONGEST_IRN = "X" * 56 + "-XXXXXXXX-20261122"
# The NRS QR code's accessible name, wherever it is shown.
QR_TITLE = "NRS e-invoice QR code"
NOT_A_KEYS_FILE = (
    "Not an NRS crypto_keys.txt: it must hold a public key (-----BEGIN PUBLIC KEY-----) and the certificate"
)


class BadKeysFile(ValueError):
    """The crypto keys file cannot make a QR code; the message says why."""


@dataclass(frozen=True)
class CryptoKeys:
    public_key: rsa.RSAPublicKey
    certificate: str


def parse_keys(text: str) -> CryptoKeys:
    """The public key and certificate of a crypto_keys.txt, checked to make a QR code of
    any IRN the service makes. Raises BadKeysFile naming what is wrong."""
    text = text.strip()
    try:
        given = json.loads(text)
    except ValueError:
        given = None
    if isinstance(given, dict):
        pem, certificate = _json_form(given)
    else:
        found = _PUBLIC_KEY.search(text)
        if found is None:
            raise BadKeysFile(NOT_A_KEYS_FILE)
        pem, certificate = found.group(0), _certificate(text[found.end() :])
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except ValueError:
        raise BadKeysFile("The public key of the crypto keys file cannot be read") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise BadKeysFile("The public key of the crypto keys file is not an RSA key")
    if not certificate:
        raise BadKeysFile("The crypto keys file holds no certificate after its public key")
    keys = CryptoKeys(key, certificate)
    room = key.key_size // 8 - _PADDING_BYTES
    if len(_message(_LONGEST_IRN, 0, keys)) > room:
        raise BadKeysFile(f"The certificate is too long to encrypt with this {key.key_size}-bit key")
    return keys


def _json_form(given: dict) -> tuple[str, str]:
    pem, certificate = given.get("public_key"), given.get("certificate")
    if not isinstance(pem, str) or not isinstance(certificate, str):
        raise BadKeysFile(NOT_A_KEYS_FILE)
    if "BEGIN PUBLIC KEY" not in pem:
        try:
            pem = base64.b64decode(pem, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise BadKeysFile("The public key of the crypto keys file cannot be read") from None
    return pem, certificate.strip()


def _certificate(rest: str) -> str:
    """The certificate after the public key: a PEM block's body, or the text itself, on one line."""
    block = _CERTIFICATE.search(rest)
    body = block.group(1) if block else rest
    return "".join(body.split())


def _message(irn: str, unix_time: int, keys: CryptoKeys) -> bytes:
    return json.dumps({"irn": f"{irn}.{unix_time}", "certificate": keys.certificate}, separators=(",", ":")).encode()


def payload(irn: str, keys: CryptoKeys, stamped_at: datetime) -> str:
    """What the NRS QR code of ``irn``, stamped at ``stamped_at``, encodes: base64 text."""
    encrypted = keys.public_key.encrypt(_message(irn, int(stamped_at.timestamp()), keys), padding.PKCS1v15())
    return base64.b64encode(encrypted).decode()


def png(payload_text: str) -> bytes:
    """The QR code of ``payload_text`` as a PNG (receco.lib.qr)."""
    return qr.qr_png(payload_text)


def svg(payload_text: str) -> str:
    """The QR code of ``payload_text`` as an SVG named for screen readers (receco.lib.qr)."""
    return qr.qr_svg(payload_text, title=QR_TITLE)
