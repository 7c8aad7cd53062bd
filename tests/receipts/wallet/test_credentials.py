"""The wallets' settings: off when none is given; anything given that cannot be used stops
start-up with a message naming the variable, and never quoting a secret."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.core.exceptions import ImproperlyConfigured

from receipts.wallet import credentials
from tests.receipts.wallet.support import (
    ISSUER_ID,
    PASS_TYPE_ID,
    SERVICE_ACCOUNT,
    TEAM_ID,
    configure_apple,
    configure_google,
    pass_certificate,
    private_pem,
    service_account,
)

ROOT = Path(__file__).resolve().parents[3]


def _refusal(loader) -> str:
    with pytest.raises(ImproperlyConfigured) as refused:
        loader()
    return str(refused.value)


def test_both_wallets_are_off_without_settings():
    assert credentials.apple() is None
    assert credentials.google() is None


def test_apple_reads_the_files_apple_gives(apple_on):
    wallet = credentials.apple()
    assert (wallet.pass_type_id, wallet.team_id) == (PASS_TYPE_ID, TEAM_ID)
    assert wallet.certificate == apple_on.certificate
    assert wallet.wwdr == apple_on.wwdr  # from Apple's DER .cer


def test_apple_reads_pem_given_inline_with_escaped_line_breaks(settings, chain):
    configure_apple(settings, chain)
    settings.RECECO_APPLE_WALLET_CERTIFICATE_FILE = settings.RECECO_APPLE_WALLET_KEY_FILE = ""
    settings.RECECO_APPLE_WALLET_CERTIFICATE = (chain.folder / "pass.pem").read_text().replace("\n", "\\n")
    settings.RECECO_APPLE_WALLET_KEY = (chain.folder / "pass-key.pem").read_text()
    assert credentials.apple().certificate == chain.certificate


def test_an_encrypted_key_needs_its_password(settings, chain, tmp_path):
    configure_apple(settings, chain)
    (tmp_path / "key.pem").write_bytes(private_pem(chain.key, b"correct horse"))
    settings.RECECO_APPLE_WALLET_KEY_FILE = str(tmp_path / "key.pem")
    assert _refusal(credentials.apple) == (
        "RECECO_APPLE_WALLET_KEY_FILE: RECECO_APPLE_WALLET_KEY_PASSWORD must be set exactly when the key is encrypted"
    )
    settings.RECECO_APPLE_WALLET_KEY_PASSWORD = "wrong"
    assert _refusal(credentials.apple) == (
        "RECECO_APPLE_WALLET_KEY_FILE is not a PEM private key, or its password is wrong"
    )
    settings.RECECO_APPLE_WALLET_KEY_PASSWORD = "correct horse"
    assert credentials.apple().certificate == chain.certificate


def test_some_apple_settings_without_the_others_are_refused(settings):
    settings.RECECO_APPLE_WALLET_PASS_TYPE_ID = PASS_TYPE_ID
    settings.RECECO_APPLE_WALLET_KEY_FILE = "/nowhere/key.pem"
    assert _refusal(credentials.apple) == (
        "Apple Wallet passes need RECECO_APPLE_WALLET_TEAM_ID, RECECO_APPLE_WALLET_CERTIFICATE, "
        "RECECO_APPLE_WALLET_WWDR_CERTIFICATE too (or none of RECECO_APPLE_WALLET_PASS_TYPE_ID, "
        "RECECO_APPLE_WALLET_TEAM_ID, RECECO_APPLE_WALLET_CERTIFICATE, RECECO_APPLE_WALLET_KEY, "
        "RECECO_APPLE_WALLET_WWDR_CERTIFICATE, to leave them off)"
    )


def test_a_file_that_cannot_be_read_is_named(settings, chain):
    configure_apple(settings, chain)
    settings.RECECO_APPLE_WALLET_KEY_FILE = "/nowhere/key.pem"
    assert _refusal(credentials.apple) == (
        "RECECO_APPLE_WALLET_KEY_FILE: cannot read /nowhere/key.pem: No such file or directory"
    )


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "RECECO_APPLE_WALLET_PASS_TYPE_ID",
            "com.acme.x9",
            "RECECO_APPLE_WALLET_PASS_TYPE_ID must be a Pass Type ID such as pass.com.example.receipts",
        ),
        (
            "RECECO_APPLE_WALLET_TEAM_ID",
            "ab12",
            "RECECO_APPLE_WALLET_TEAM_ID must be a team id of 10 capital letters and digits",
        ),
        (
            "RECECO_APPLE_WALLET_CERTIFICATE",
            "-----BEGIN CERTIFICATE-----\\nnot one\\n-----END CERTIFICATE-----",
            "RECECO_APPLE_WALLET_CERTIFICATE is not a certificate (PEM or DER)",
        ),
        ("RECECO_APPLE_WALLET_KEY", "secret-looking text", "RECECO_APPLE_WALLET_KEY is not a PEM private key"),
    ],
)
def test_a_setting_that_cannot_be_used_is_named_and_not_quoted(settings, chain, setting, value, message):
    configure_apple(settings, chain)
    setattr(settings, setting, value)
    refusal = _refusal(credentials.apple)
    assert refusal.startswith(message)
    assert value not in refusal


def test_a_key_that_is_not_the_certificates_is_refused(settings, chain, tmp_path):
    configure_apple(settings, chain)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    settings.RECECO_APPLE_WALLET_KEY = private_pem(other).decode()
    assert _refusal(credentials.apple) == ("RECECO_APPLE_WALLET_KEY is not the key of RECECO_APPLE_WALLET_CERTIFICATE")


def test_a_certificate_of_another_pass_type_is_refused(settings, chain, tmp_path):
    configure_apple(settings, chain)
    other = pass_certificate(chain.wwdr, chain.wwdr_key, chain.key, "pass.test.receco.tickets")
    settings.RECECO_APPLE_WALLET_CERTIFICATE = other.public_bytes(serialization.Encoding.PEM).decode()
    assert _refusal(credentials.apple) == (
        "RECECO_APPLE_WALLET_CERTIFICATE is for the Pass Type ID pass.test.receco.tickets, "
        f"not RECECO_APPLE_WALLET_PASS_TYPE_ID={PASS_TYPE_ID}"
    )


def test_a_wwdr_certificate_that_did_not_issue_it_is_refused(settings, chain):
    configure_apple(settings, chain)
    settings.RECECO_APPLE_WALLET_WWDR_CERTIFICATE_FILE = chain.path("root.pem")
    assert _refusal(credentials.apple) == (
        "RECECO_APPLE_WALLET_WWDR_CERTIFICATE did not issue RECECO_APPLE_WALLET_CERTIFICATE: use the WWDR "
        "certificate its Issuer names (Apple has several generations, such as G4)"
    )


def test_google_reads_the_service_accounts_key_file(settings, google_key, tmp_path):
    (tmp_path / "account.json").write_text(json.dumps(service_account(google_key)))
    settings.RECECO_GOOGLE_WALLET_ISSUER_ID = ISSUER_ID
    settings.RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT_FILE = str(tmp_path / "account.json")
    wallet = credentials.google()
    assert (wallet.issuer_id, wallet.service_account) == (ISSUER_ID, SERVICE_ACCOUNT)
    assert wallet.origins == ("https://receipts.example.test",)  # RECECO_WEB_URL by default


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT": ""},
            "Google Wallet passes need RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT too",
        ),
        (
            {"RECECO_GOOGLE_WALLET_ISSUER_ID": "issuer"},
            "RECECO_GOOGLE_WALLET_ISSUER_ID must be the issuer id, digits only",
        ),
        (
            {"RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT": "{not json"},
            "RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT is not JSON (a service account's key file)",
        ),
        (
            {"RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT": '{"type": "authorized_user"}'},
            'RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT is not a service account\'s key file ("type": "service_account")',
        ),
        (
            {"RECECO_GOOGLE_WALLET_ORIGINS": ["receipts.example.test"]},
            "RECECO_GOOGLE_WALLET_ORIGINS must list origins such as https://receipts.example.com, "
            "not 'receipts.example.test'",
        ),
    ],
)
def test_google_settings_that_cannot_be_used_are_named(settings, google_key, change, message):
    configure_google(settings, google_key)
    for name, value in change.items():
        setattr(settings, name, value)
    assert _refusal(credentials.google).startswith(message)


def test_google_wants_an_rsa_key(settings, google_key):
    configure_google(settings, google_key)
    account = service_account(google_key)
    account["private_key"] = private_pem(ec.generate_private_key(ec.SECP256R1())).decode()
    settings.RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT = json.dumps(account)
    assert _refusal(credentials.google) == (
        "RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT: its private_key is not an RSA key (Google signs with RS256)"
    )


def test_start_up_stops_naming_what_is_missing():
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        clean.pop(name, None)
    env = {**clean, "DJANGO_DEBUG": "1", "RECECO_GOOGLE_WALLET_ISSUER_ID": ISSUER_ID}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert (
        "django.core.exceptions.ImproperlyConfigured: Google Wallet passes need RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT"
        " too (or none of RECECO_GOOGLE_WALLET_ISSUER_ID, RECECO_GOOGLE_WALLET_SERVICE_ACCOUNT, to leave them off)"
    ) in result.stderr
