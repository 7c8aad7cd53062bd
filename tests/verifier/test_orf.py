"""receco-verify reads the receipt file as "Download for your records" saves it (ORF 0.1
with its trust and proof): a genuine file passes; a file whose content, trust fields or
proof was edited fails, naming the check; a file not in the log yet is reported signed only."""

import copy
import json

import pytest
from receco_verify.cli import main

from tests.verifier.support import Signer, bundles, orf_file


@pytest.fixture
def files(tmp_path):
    signer = Signer()
    found, _ = bundles(signer, 5)

    def write(document, keys=None):
        (tmp_path / "receipt.orf.json").write_text(json.dumps(document))
        (tmp_path / "jwks.json").write_text(json.dumps(keys or signer.jwks()))
        return [str(tmp_path / "receipt.orf.json"), "--keys", str(tmp_path / "jwks.json")]

    write.bundles, write.signer = found, signer
    return write


def _edited(document, change):
    edited = copy.deepcopy(document)
    change(edited)
    return edited


def test_a_genuine_file_is_verified(files, capsys):
    assert main(files(orf_file(files.bundles[2]))) == 0
    out = capsys.readouterr().out
    assert "VERIFIED receipt K00002 (token-0002-abcdefgh)" in out
    assert "log: leaf 2 of 5, inclusion proof checked" in out


def _content(document):
    return document["extensions"]["receco"]["signed_content"]


def _log(document):
    return document["extensions"]["receco"]["log"]


CHANGED = "the signature does not match the receipt's content"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _content(d).update(total_amount=1), CHANGED),
        (lambda d: _content(d)["items"][0].update(name="Fried rice"), CHANGED),
        (lambda d: _content(d).update(transaction_date="2026-01-01T00:00:00.000Z"), CHANGED),
        (lambda d: _content(d)["merchant"].update(name="Another shop"), CHANGED),
        (lambda d: d["trust"].update(hash="0" * 64), "trust.hash is not the SHA-256 of the signed content"),
        (lambda d: d["trust"].update(signed_by="another"), "trust.signed_by is not the key the signed content names"),
        (lambda d: d["trust"].update(hash_algorithm="MD5"), "trust.hash_algorithm is 'MD5', not 'SHA-256'"),
        (lambda d: _log(d)["inclusion"].__setitem__(0, "A" * 43 + "="), "the receipt is not in the log at 2"),
        (lambda d: _log(d).update(leaf_index=3), "the receipt is not in the log at 3"),
        (lambda d: _log(d).update(checkpoint=_log(d)["checkpoint"].replace("\n5\n", "\n6\n")),
         "the checkpoint is not valid: no valid signature"),
        (lambda d: d["extensions"]["receco"].pop("signed_content"), "the file carries no signature"),
    ],
    ids=["amount", "item", "date", "merchant", "hash", "signed_by", "algorithm", "proof hash", "proof index",
         "checkpoint", "no content"],
)  # fmt: skip
def test_an_edited_file_is_not_verified(files, capsys, change, message):
    assert main(files(_edited(orf_file(files.bundles[2]), change))) == 1
    assert f"NOT VERIFIED: {message}" in capsys.readouterr().err


def test_a_file_not_in_the_log_yet_is_signed_but_not_verified(files, capsys):
    assert main(files(orf_file(files.bundles[1], logged=False))) == 1
    out, err = capsys.readouterr()
    assert "SIGNED receipt K00001 (token-0001-abcdefgh)" in out
    assert f"signature: Ed25519 by key {files.signer.kid}" in out
    assert "  number: MP-2026-000002, signed\n" in out
    assert "NOT VERIFIED: the file carries no proof of the receipt's place in the log yet" in err


def test_a_changed_file_not_in_the_log_yet_is_not_signed(files, capsys):
    document = orf_file(files.bundles[1], logged=False)
    _content(document).update(total_amount=1)
    document["trust"]["hash"] = orf_file({**files.bundles[1], "content": _content(document)})["trust"]["hash"]
    assert main(files(document)) == 1
    out, err = capsys.readouterr()
    assert "SIGNED" not in out
    assert "NOT VERIFIED: the signature does not match the receipt's content" in err


def test_a_rotated_key_leaves_old_files_verifiable(files, capsys):
    old, new = Signer(), files.signer
    found, _ = bundles(new, 5, signed_by=[old, old, new, new, new])
    assert main(files(orf_file(found[0]), keys=new.jwks(old))) == 0, capsys.readouterr().err
