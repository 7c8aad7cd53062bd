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
from tests.servers import run_manage


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


def test_makesigningkey_makes_the_file_the_environment_names(tmp_path):
    """An integrator's finding: with RECECO_SIGNING_KEY_FILE naming the file, `makesigningkey
    --file` that file stopped at start-up (ImproperlyConfigured: no file at ...) before it
    could make it. In a process of its own, as an operator runs it."""
    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    named = tmp_path / "secrets" / "signing.json"
    made = run_manage(database, "makesigningkey", "--file", str(named), RECECO_SIGNING_KEY_FILE=str(named))
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("Made signing key ")
    assert f" in {named}\n" in made.stdout
    assert json.loads(named.read_text())["keys"][0]["d"]
    # And with no --file: the file the variable names.
    other = tmp_path / "other.json"
    made = run_manage(database, "makesigningkey", RECECO_SIGNING_KEY_FILE=str(other))
    assert made.returncode == 0, made.stderr
    assert other.exists()


def test_a_key_file_named_but_missing_still_stops_the_servers_and_the_other_commands(tmp_path):
    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    missing = {"RECECO_SIGNING_KEY_FILE": str(tmp_path / "nowhere.json")}
    checked = run_manage(database, "check", **missing)
    assert checked.returncode == 1
    assert f"(ledger.E001) RECECO_SIGNING_KEY_FILE: no file at {tmp_path / 'nowhere.json'}" in checked.stderr
    served = run_manage(database, "shell", "-c", "import receco.wsgi", **missing)
    assert served.returncode == 1
    assert "ImproperlyConfigured: RECECO_SIGNING_KEY_FILE: no file at" in served.stderr
    started = run_manage(database, "shell", "-c", "import receco.wsgi; print('served')")
    assert (started.returncode, started.stdout.splitlines()[-1]) == (0, "served")
