"""receco-verify as an auditor runs it: files in, a verdict out, no network and no Django."""

import base64
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from receco_verify import merkle
from receco_verify.canonical import canonicalize
from receco_verify.cli import main

from tests.verifier.support import Signer, bundles

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    signer = Signer()
    found, checkpoint = bundles(signer, 5)

    def write(bundle, keys=None, name="receipt.json"):
        (tmp_path / name).write_text(json.dumps(bundle))
        (tmp_path / "jwks.json").write_text(json.dumps(keys or signer.jwks()))
        (tmp_path / "checkpoint.txt").write_text(checkpoint)
        return [str(tmp_path / name), "--keys", str(tmp_path / "jwks.json")]

    write.bundles, write.signer, write.checkpoint = found, signer, checkpoint
    return write


def test_a_genuine_receipt_is_verified_and_the_checks_are_named(files, capsys):
    assert main(files(files.bundles[3])) == 0
    out = capsys.readouterr().out
    assert "VERIFIED receipt K00003 (token-0003-abcdefgh)" in out
    assert f"signature: Ed25519 by key {files.signer.kid}" in out
    assert "  number: MP-2026-000004, signed\n" in out
    assert "checkpoint: receco.test/log, 5 receipts, signed by a published key" in out
    assert "log: leaf 3 of 5, inclusion proof checked" in out


def _changed(bundle, change):
    changed = copy.deepcopy(bundle)
    change(changed["content"])
    return changed


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c.update(total_amount=c["total_amount"] + 1),
        lambda c: c["items"][0].update(name="Fried rice"),
        lambda c: c["merchant"].update(name="Another shop"),
        lambda c: c.update(token="token-9999-abcdefgh"),
        lambda c: c.update(issued_at="2026-01-01T00:00:00.000Z"),
        lambda c: c.update(number="MP-2026-000099"),
        lambda c: c.update(number=None),
        lambda c: c.pop("number"),
        lambda c: c.update(v=1),
    ],
    ids=["amount", "item", "merchant", "token", "a date added", "number", "number erased", "number removed", "v"],
)
def test_a_changed_receipt_is_not_verified(files, capsys, change):
    assert main(files(_changed(files.bundles[1], change))) == 1
    assert capsys.readouterr().err == (
        "NOT VERIFIED: the signature does not match the receipt's content: it was changed after signing\n"
    )


def test_a_receipt_signed_in_version_1_is_verified_and_says_its_number_is_not_signed(files, capsys):
    found, _ = bundles(files.signer, 3, version=1)
    assert main(files(found[2])) == 0
    out = capsys.readouterr().out
    assert "VERIFIED receipt K00002 (token-0002-abcdefgh)" in out
    assert "  number: not signed (a receipt signed in version 1, before numbers were)\n" in out
    assert "log: leaf 2 of 3, inclusion proof checked" in out


def test_a_receipt_issued_before_receipts_were_numbered_says_it_has_none(files, capsys):
    unnumbered = _signed(files.signer, {**files.bundles[0]["content"], "number": None})
    assert main(files(unnumbered)) == 0
    assert "  number: none (a receipt issued before receipts were numbered)\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {"v": 4},
            "the content is of version (v) 4, this verifier knows versions 1, 2 and 3: install a newer receco-verify",
        ),
        (
            {"v": True},
            "the content is of version (v) True, this verifier knows versions 1, 2 and 3: "
            "install a newer receco-verify",
        ),
        (
            {"v": None},
            "the content is of version (v) None, this verifier knows versions 1, 2 and 3: "
            "install a newer receco-verify",
        ),
        ({"number": 4}, "a content of version 3 signs the receipt's number: it has none"),
        (
            {"merchant": {"id": "m_1", "name": "Mama Put"}},
            "a content of version 3 states the merchant's checked identity: it has none",
        ),
        (
            {"merchant": {"id": "m_1", "name": "Mama Put", "identity": {"registration_number": "RC1"}}},
            "a content of version 3 states the merchant's checked identity: it has none",
        ),
    ],
    ids=["a later version", "a boolean", "none", "a number that is not a string", "no identity", "no legal name"],
)
def test_a_content_this_verifier_cannot_read_is_not_verified_even_if_signed(files, capsys, content, message):
    # Signed by the published key (as a later service would sign a later version), so
    # the signature passes and the version is what is refused.
    odd = _signed(files.signer, {**files.bundles[0]["content"], **content})
    assert main(files(odd)) == 1
    assert capsys.readouterr().err == f"NOT VERIFIED: {message}\n"


def _signed(signer, content: dict) -> dict:
    """A bundle of ``content`` alone in its log, signed by ``signer``, and its checkpoint."""
    found, checkpoint = bundles(signer, 1)
    leaf = merkle.leaf_hash(canonicalize(content))
    signature = base64.b64encode(signer.private.sign(canonicalize(content))).decode()
    return {**found[0], "content": content, "signature": signature, "checkpoint": signer.checkpoint(1, leaf)}


def test_a_receipt_re_signed_by_a_key_that_is_not_published_is_not_verified(files, capsys):
    other = Signer()
    forged, _ = bundles(other, 5)
    assert main(files(forged[0])) == 1
    assert f"the key {other.kid} that signed the receipt is not among the published keys" in capsys.readouterr().err


def test_a_receipt_at_another_place_in_the_log_is_not_verified(files, capsys):
    moved = {**files.bundles[1], "leaf_index": 2}
    assert main(files(moved)) == 1
    assert "the receipt is not in the log at 2" in capsys.readouterr().err


def test_a_proof_for_another_tree_size_than_the_checkpoint_is_refused(files, capsys, tmp_path):
    args = files(files.bundles[1])
    newer = files.signer.checkpoint(6, b"\x07" * 32)
    (tmp_path / "newer.txt").write_text(newer)
    assert main([*args, "--checkpoint", str(tmp_path / "newer.txt")]) == 1
    assert "the inclusion proof is for a tree of 5 receipts, the checkpoint is of 6" in capsys.readouterr().err


def test_a_checkpoint_signed_by_another_key_is_refused(files, capsys, tmp_path):
    args = files(files.bundles[0])
    forged = Signer().checkpoint(5, b"\x07" * 32)
    (tmp_path / "forged.txt").write_text(forged)
    assert main([*args, "--checkpoint", str(tmp_path / "forged.txt")]) == 1
    assert "the checkpoint is not valid: no valid signature" in capsys.readouterr().err


def test_a_rotated_key_still_verifies_the_receipts_it_signed(files, capsys):
    old, new = Signer(), files.signer
    # Receipts 0-2 signed before the rotation, 3-4 after; the checkpoint by the new key.
    found, _ = bundles(new, 5, signed_by=[old, old, old, new, new])
    for bundle in found:
        assert main(files(bundle, keys=new.jwks(old))) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(files(found[0], keys=new.jwks())) == 1  # the old key no longer published
    assert f"the key {old.kid} that signed the receipt is not among the published keys" in capsys.readouterr().err


def test_unreadable_files_are_a_usage_error(files, capsys, tmp_path):
    args = files(files.bundles[0])
    (tmp_path / "receipt.json").write_text("{not json")
    assert main(args) == 2
    assert "receipt.json is not JSON" in capsys.readouterr().err


def test_the_console_script_runs_without_django_or_network(files, tmp_path):
    args = files(files.bundles[4])
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT / "verifier" / "src")}
    code = "import sys, socket; socket.socket = None; from receco_verify.cli import main; " + (
        "r = main(sys.argv[1:]); assert 'django' not in sys.modules; sys.exit(r)"
    )
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "VERIFIED receipt K00004" in result.stdout
