"""Throwaway wallet credentials, made by the test: an Apple-like certificate chain (a root,
a WWDR intermediate, a Pass Type ID certificate with its key) and a Google service
account key file. Nothing real, nothing in the repository."""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

PASS_TYPE_ID = "pass.test.receco.receipts"
TEAM_ID = "TEST123456"
ISSUER_ID = "3388000000012345678"
SERVICE_ACCOUNT = "receco-wallet@receco-test.iam.gserviceaccount.com"
KEY_ID = "0123456789abcdef0123456789abcdef01234567"


@dataclass(frozen=True)
class AppleChain:
    root: x509.Certificate
    wwdr: x509.Certificate
    wwdr_key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    key: rsa.RSAPrivateKey
    folder: Path  # root.pem, wwdr.pem, wwdr.cer (DER), pass.pem, pass-key.pem

    def path(self, name: str) -> str:
        return str(self.folder / name)


def _certificate(subject, issuer, public_key, signer, *, ca: bool) -> x509.Certificate:
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    return builder.sign(signer, hashes.SHA256())


def pass_certificate(
    wwdr: x509.Certificate, wwdr_key, key: rsa.RSAPrivateKey, pass_type_id: str = PASS_TYPE_ID
) -> x509.Certificate:
    """A Pass Type ID certificate as Apple writes one: the type as its UID, the team as its OU."""
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.USER_ID, pass_type_id),
            x509.NameAttribute(NameOID.COMMON_NAME, f"Pass Type ID: {pass_type_id}"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, TEAM_ID),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Receco Test Operator"),
            x509.NameAttribute(NameOID.COUNTRY_NAME, "NG"),
        ]
    )
    return _certificate(subject, wwdr.subject, key.public_key(), wwdr_key, ca=False)


def apple_chain(folder: Path) -> AppleChain:
    """A new chain, its files written to ``folder``."""
    root_key = ec.generate_private_key(ec.SECP256R1())
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Receco Test Root CA")])
    root = _certificate(root_name, root_name, root_key.public_key(), root_key, ca=True)
    wwdr_key = ec.generate_private_key(ec.SECP256R1())
    wwdr_name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "Receco Test Worldwide Developer Relations"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "G4"),
        ]
    )
    wwdr = _certificate(wwdr_name, root.subject, wwdr_key.public_key(), root_key, ca=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    certificate = pass_certificate(wwdr, wwdr_key, key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "root.pem").write_bytes(root.public_bytes(serialization.Encoding.PEM))
    (folder / "wwdr.pem").write_bytes(wwdr.public_bytes(serialization.Encoding.PEM))
    (folder / "wwdr.cer").write_bytes(wwdr.public_bytes(serialization.Encoding.DER))
    (folder / "pass.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "pass-key.pem").write_bytes(private_pem(key))
    return AppleChain(root, wwdr, wwdr_key, certificate, key, folder)


def private_pem(key, password: bytes | None = None) -> bytes:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def configure_apple(settings, chain: AppleChain) -> None:
    """Apple Wallet on, from files, as an operator would set it up."""
    settings.RECECO_APPLE_WALLET_PASS_TYPE_ID = PASS_TYPE_ID
    settings.RECECO_APPLE_WALLET_TEAM_ID = TEAM_ID
    settings.RECECO_APPLE_WALLET_CERTIFICATE_FILE = chain.path("pass.pem")
    settings.RECECO_APPLE_WALLET_KEY_FILE = chain.path("pass-key.pem")
    settings.RECECO_APPLE_WALLET_WWDR_CERTIFICATE_FILE = chain.path("wwdr.cer")


def service_account(key: rsa.RSAPrivateKey) -> dict:
    """A service account's JSON key file as Google Cloud's console gives it."""
    return {
        "type": "service_account",
        "project_id": "receco-test",
        "private_key_id": KEY_ID,
        "private_key": private_pem(key).decode(),
        "client_email": SERVICE_ACCOUNT,
        "client_id": "100000000000000000001",
        "token_uri": "https://oauth2.googleapis.com/token",
    }


def configure_google(settings, key: rsa.RSAPrivateKey) -> None:
    """Google Wallet on, the key file given inline."""
    settings.RECECO_GOOGLE_WALLET_ISSUER_ID = ISSUER_ID
    settings.RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT = json.dumps(service_account(key))
    settings.RECECO_GOOGLE_WALLET_ORIGINS = ["https://receipts.example.test"]


def openssl_verify(signature: Path, content: Path, root: Path) -> subprocess.CompletedProcess:
    """``openssl smime -verify`` of a detached DER signature of ``content``, trusting ``root`` only.
    Without the openssl command the test is skipped, except in CI (CI=true), where it fails."""
    if shutil.which("openssl") is None:
        message = "the signature is checked with the openssl command: apt-get install openssl"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    command = ["openssl", "smime", "-verify", "-binary", "-inform", "DER", "-in", str(signature)]
    command += ["-content", str(content), "-CAfile", str(root), "-purpose", "any", "-out", "/dev/null"]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)
