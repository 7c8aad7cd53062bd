"""The receipt file ("Download for your records", getReceipt's ORF) carries its trust: the
hash of its signed content, the signature, the key; its signed content and, once it is in
the log, its proof. The file stays valid ORF 0.1, and receco-verify checks it as it is
downloaded: a genuine receipt passes, a stored receipt changed behind the service's back
fails, a receipt not in the log yet is reported as signed only."""

import base64
import hashlib
import json

import pytest
from receco_verify import orf as orf_file
from receco_verify.canonical import canonicalize
from receco_verify.cli import main as receco_verify

from ledger.models import Checkpoint, Leaf
from ledger.trust import document
from receco.lib import signingkeys
from receipts.models import Receipt
from tests.ledger.conftest import append
from tests.receipts.rendering.test_orf import VALIDATOR


def _download(client, receipt) -> dict:
    response = client.get(f"/app/receipt/{receipt.token}/receipt.orf.json")
    assert response.status_code == 200
    found = response.json()
    assert sorted(VALIDATOR.iter_errors(found), key=str) == []
    return found


def _verify(tmp_path, client, found: dict, *args: str) -> int:
    (tmp_path / "receipt.orf.json").write_text(json.dumps(found))
    (tmp_path / "jwks.json").write_text(client.get("/.well-known/jwks.json").content.decode())
    return receco_verify([str(tmp_path / "receipt.orf.json"), "--keys", str(tmp_path / "jwks.json"), *args])


def test_a_logged_receipt_s_file_carries_its_trust_and_proof(client, receipt, keys, tmp_path, capsys):
    append()
    found = _download(client, receipt)
    leaf = Leaf.objects.get(receipt=receipt)
    content = found["extensions"]["receco"]["signed_content"]
    assert (content["token"], content["total_amount"]) == (receipt.token, 130000)
    assert found["trust"] == {
        "hash": hashlib.sha256(canonicalize(content)).hexdigest(),
        "hash_algorithm": "SHA-256",
        "signature": base64.b64encode(bytes(leaf.signature)).decode(),
        "signed_by": keys.kid,
    }
    assert leaf.content_digest.hex() == found["trust"]["hash"]
    log = found["extensions"]["receco"]["log"]
    assert (log["leaf_index"], log["tree_size"], log["inclusion"]) == (0, 1, [])
    assert log["checkpoint"] == client.get("/log/checkpoint").content.decode()
    assert _verify(tmp_path, client, found) == 0
    assert f"VERIFIED receipt K7P2QX ({receipt.token})" in capsys.readouterr().out


def test_the_file_of_a_receipt_not_logged_yet_is_signed_and_says_it_has_no_proof(
    client, receipt, keys, tmp_path, capsys
):
    found = _download(client, receipt)
    assert found["extensions"]["receco"]["log"] is None
    assert found["trust"]["signed_by"] == keys.kid
    assert _verify(tmp_path, client, found) == 1
    out, err = capsys.readouterr()
    assert f"SIGNED receipt K7P2QX ({receipt.token})" in out
    assert "NOT VERIFIED: the file carries no proof of the receipt's place in the log yet" in err
    # The appender signs the same content with the same key: the same signature.
    append()
    assert _download(client, receipt)["trust"] == found["trust"]


def test_a_receipt_appended_but_not_in_a_checkpoint_yet_carries_the_log_s_signature(client, receipt):
    append(checkpoint=False)
    found = _download(client, receipt)
    assert found["extensions"]["receco"]["log"] is None
    assert found["trust"]["signature"] == base64.b64encode(bytes(Leaf.objects.get(receipt=receipt).signature)).decode()


def test_with_signing_off_a_receipt_not_logged_has_no_trust(receipt, settings):
    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        found = document(receipt)
    finally:
        signingkeys.keyring.cache_clear()
    assert "trust" not in found
    assert "signed_content" not in found["extensions"]["receco"]


def test_a_rotated_key_leaves_an_old_receipt_s_file_verifiable(
    client, receipt, receipt_factory, keys, request, tmp_path, capsys
):
    append()
    rotated = request.getfixturevalue("other_keys")  # a new current key; the old one retired
    receipt_factory(token="rcpt_afterrot_aaaaaa", short_code="AFTER1")
    append()
    found = _download(client, receipt)
    assert found["trust"]["signed_by"] == keys.kid  # signed by the retired key
    assert found["extensions"]["receco"]["log"]["tree_size"] == 2  # proven against a checkpoint the new key signed
    assert Checkpoint.objects.get(size=2).kid == rotated.kid
    assert _verify(tmp_path, client, found) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ("amount", {"total_amount": 129999}),
        ("item", {"items": [{"name": "Jollof rice", "quantity": 3, "unit_price": 50000, "total_price": 150000}]}),
        ("date", {"transaction_date": "2026-11-21T10:15:00Z"}),
        ("merchant", {"merchant_name": "Another Kitchen"}),
    ],
)
def test_a_stored_receipt_changed_after_it_was_logged_fails_in_its_file(
    client, receipt, tmp_path, capsys, change, fields
):
    append()
    Receipt.objects.filter(id=receipt.id).update(**fields)
    found = _download(client, receipt)
    assert _verify(tmp_path, client, found) == 1
    assert "NOT VERIFIED: the signature does not match the receipt's content" in capsys.readouterr().err


def test_the_api_s_orf_answer_carries_the_same_trust(client, api, receipt):
    append()
    status, body = api.get("getReceipt", {"token": receipt.token, "format": "orf"})
    assert status == 200
    assert body["result"]["data"] == _download(client, receipt)


def test_a_file_is_turned_into_the_bundle_the_log_serves(client, receipt):
    append()
    bundle = client.get(f"/log/proof/{receipt.token}").json()
    assert orf_file.bundle_of(_download(client, receipt)) == bundle


# The third hostile review: in the file from "Download for your records", `total` changed
# from 1300.0 to 1301.0 was VERIFIED ("inclusion proof checked"). Every field the signed
# content states is held to it; each change names its field.
FILE_EDITS = [
    ("total", lambda d: d.update(total=1301.0), "the file's total is 1301.0, the signed content says 1300.0"),
    ("an item's price", lambda d: d["line_items"][0].update(unit_price=5.0),
     "the file's line_items[0].unit_price is 5.0, the signed content says 500.0"),
    ("a tax amount", lambda d: d["tax"]["tax_lines"][0].update(tax_amount=1.0),
     "the file's tax.tax_lines[0].tax_amount is 1.0, the signed content says 90.7"),
    ("the date", lambda d: d["receipt"].update(issue_timestamp="2026-11-21T10:15:00.000Z"),
     'the file\'s receipt.issue_timestamp is "2026-11-21T10:15:00.000Z", the signed content says '
     '"2026-11-22T10:15:00.000Z"'),
    ("the shop", lambda d: d["merchant"].update(display_name="Shoprite Lekki (Official)"),
     'the file\'s merchant.display_name is "Shoprite Lekki (Official)", the signed content says "Mama Put Kitchen"'),
    ("the number", lambda d: d["extensions"]["receco"].update(receipt_number="MAMAPU-2026-000999"),
     "the file's extensions.receco.receipt_number is \"MAMAPU-2026-000999\""),
]  # fmt: skip


@pytest.mark.parametrize(("change", "named"), [e[1:] for e in FILE_EDITS], ids=[e[0] for e in FILE_EDITS])
def test_a_downloaded_file_whose_fields_were_changed_is_not_verified(
    client, receipt_factory, tmp_path, capsys, change, named
):
    receipt = receipt_factory(
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}]
    )
    append()
    found = _download(client, receipt)
    assert found["total"] == 1300.0
    assert _verify(tmp_path, client, found) == 0
    capsys.readouterr()
    change(found)
    assert _verify(tmp_path, client, found) == 1
    assert capsys.readouterr().err.startswith(f"NOT VERIFIED: {named}")
