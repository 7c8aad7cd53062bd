"""Signing keys from the environment or a file (receco.lib.signingkeys), and the command
that makes and rotates a key file."""

import json
import os
import re
import stat

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from receco.lib import signingkeys


@pytest.fixture
def fresh(settings):
    settings.RECECO_SIGNING_KEYS = ""
    signingkeys.keyring.cache_clear()
    yield settings
    signingkeys.keyring.cache_clear()


def test_a_key_file_is_made_private_and_rotation_keeps_the_old_public_key(fresh, tmp_path, capsys):
    path = tmp_path / "keys" / "signing.json"
    call_command("makesigningkey", file=str(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    first = json.loads(path.read_text())["keys"]
    assert len(first) == 1
    assert "d" in first[0]
    assert f"Made signing key {first[0]['kid']} in {path}" in capsys.readouterr().out

    call_command("makesigningkey", file=str(path), if_missing=True)
    assert json.loads(path.read_text())["keys"] == first
    with pytest.raises(CommandError, match="exists: --rotate replaces its current key"):
        call_command("makesigningkey", file=str(path))

    call_command("makesigningkey", file=str(path), rotate=True)
    rotated = json.loads(path.read_text())["keys"]
    assert [("d" in jwk) for jwk in rotated] == [True, False]
    assert rotated[1] == {name: value for name, value in first[0].items() if name != "d"}

    fresh.RECECO_SIGNING_KEY_FILE = str(path)
    ring = signingkeys.keyring()
    assert ring.kid == rotated[0]["kid"]
    assert set(ring.public) == {rotated[0]["kid"], first[0]["kid"]}
    assert all("d" not in jwk for jwk in ring.jwks()["keys"])


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "RECECO_SIGNING_KEYS is not JSON (a JWK Set)"),
        ('{"keys": []}', 'RECECO_SIGNING_KEYS must hold a JWK Set: {"keys": [...]} with at least one key'),
        ('{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}]}', "must hold exactly one private key"),
        ('{"keys": [{"kty": "RSA", "d": "AA"}]}', "RECECO_SIGNING_KEYS: not an Ed25519 key"),
    ],
)
def test_a_malformed_key_stops_the_start_naming_the_variable(fresh, document, message):
    fresh.RECECO_SIGNING_KEYS = document
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        signingkeys.keyring()


def test_a_private_key_that_does_not_match_its_public_key_is_refused(fresh):
    one, two = signingkeys.generate_jwk(), signingkeys.generate_jwk()
    fresh.RECECO_SIGNING_KEYS = json.dumps({"keys": [{**one, "d": two["d"]}]})
    with pytest.raises(ImproperlyConfigured, match="the private key's d does not match its x"):
        signingkeys.keyring()


def test_a_key_file_named_but_missing_is_refused_and_none_at_all_is_signing_off(fresh, tmp_path):
    fresh.RECECO_SIGNING_KEY_FILE = str(tmp_path / "nowhere.json")
    with pytest.raises(ImproperlyConfigured, match="RECECO_SIGNING_KEY_FILE: no file at"):
        signingkeys.keyring()
    signingkeys.keyring.cache_clear()
    fresh.RECECO_SIGNING_KEY_FILE = ""
    assert signingkeys.keyring() is None


def test_the_appender_command_refuses_to_run_without_a_key(fresh, db):
    fresh.RECECO_SIGNING_KEY_FILE = ""
    with pytest.raises(CommandError, match="Signing is off: no signing key configured"):
        call_command("appendlog", once=True)
