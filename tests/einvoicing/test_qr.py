"""The NRS QR code: the IRN and its moment with the certificate, encrypted with the public
key of the taxpayer's crypto_keys.txt, in either form the file is described in."""

import base64
import io
import json
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from PIL import Image

from einvoicing import qr
from tests.einvoicing.conftest import CERTIFICATE

IRN = "MAMAPU2026000001-94ND90NR-20261122"
STAMPED = datetime(2026, 11, 22, 10, 15, 7, tzinfo=UTC)


def _pem(public_key) -> str:
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def test_the_payload_is_the_irn_and_its_moment_with_the_certificate_encrypted_for_nrs(crypto_keys, nrs_private_key):
    payload = qr.payload(IRN, qr.parse_keys(crypto_keys), STAMPED)
    message = nrs_private_key.decrypt(base64.b64decode(payload), padding.PKCS1v15())
    assert json.loads(message) == {"irn": f"{IRN}.{int(STAMPED.timestamp())}", "certificate": CERTIFICATE}
    assert f"{IRN}.1795342507" in message.decode()
    assert qr.payload(IRN, qr.parse_keys(crypto_keys), STAMPED) != payload  # PKCS #1 v1.5 pads at random


def test_the_json_form_of_the_file_is_read_too(nrs_private_key):
    pem = _pem(nrs_private_key.public_key())
    for public_key in (pem, base64.b64encode(pem.encode()).decode()):
        keys = qr.parse_keys(json.dumps({"public_key": public_key, "certificate": CERTIFICATE}))
        assert keys.certificate == CERTIFICATE
        assert keys.public_key.public_numbers() == nrs_private_key.public_key().public_numbers()


def test_a_certificate_in_a_pem_block_is_its_body_on_one_line(nrs_private_key):
    text = f"{_pem(nrs_private_key.public_key())}-----BEGIN CERTIFICATE-----\nVVhr\nallF\n-----END CERTIFICATE-----\n"
    assert qr.parse_keys(text).certificate == "VVhrallF"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello", "Not an NRS crypto_keys.txt: it must hold a public key"),
        ("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\nVVhr", "cannot be read"),
        ('{"public_key": "not base64!", "certificate": "VVhr"}', "cannot be read"),
        ('{"certificate": "VVhr"}', "Not an NRS crypto_keys.txt"),
    ],
)
def test_what_is_not_a_keys_file_is_refused_saying_why(text, message):
    with pytest.raises(qr.BadKeysFile, match=message):
        qr.parse_keys(text)


def test_a_key_that_is_not_rsa_or_a_file_without_certificate_is_refused(nrs_private_key):
    elliptic = _pem(ec.generate_private_key(ec.SECP256R1()).public_key())
    with pytest.raises(qr.BadKeysFile, match="^The public key of the crypto keys file is not an RSA key$"):
        qr.parse_keys(elliptic + CERTIFICATE)
    with pytest.raises(qr.BadKeysFile, match="^The crypto keys file holds no certificate after its public key$"):
        qr.parse_keys(_pem(nrs_private_key.public_key()))


def test_a_certificate_too_long_to_encrypt_is_refused_when_the_file_is_read(nrs_private_key):
    # RSA-2048 with PKCS #1 v1.5 encrypts 245 bytes: an X.509 certificate of a kilobyte cannot be.
    with pytest.raises(qr.BadKeysFile, match="^The certificate is too long to encrypt with this 2048-bit key$"):
        qr.parse_keys(_pem(nrs_private_key.public_key()) + "A" * 200)


def test_the_code_is_a_png_of_the_payload(crypto_keys):
    image = Image.open(io.BytesIO(qr.png(qr.payload(IRN, qr.parse_keys(crypto_keys), STAMPED))))
    assert image.format == "PNG"
    assert image.size[0] == image.size[1] > 300  # 344 bytes of base64 need a version-10 code or so
