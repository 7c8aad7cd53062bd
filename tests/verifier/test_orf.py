"""receco-verify reads the receipt file as "Download for your records" saves it (ORF 0.1
with its trust and proof): a genuine file passes; a file whose content, trust fields or
proof was edited fails, naming the check; a file not in the log yet is reported signed only."""

import base64
import copy
import json

import pytest
from receco_verify import merkle
from receco_verify.canonical import canonicalize
from receco_verify.cli import main

from tests.verifier.support import Signer, bundles, content, orf_file


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


# --- Every field the signed content states, changed in the file (the third hostile review:
# a saved file whose total was changed from 1300.0 to 1301.0 was VERIFIED) -----------------

EDITS = [
    ("total", lambda d: d.update(total=d["total"] + 1), "the file's total is 11.02, the signed content says 10.02"),
    ("currency", lambda d: d.update(currency="USD"), 'the file\'s currency is "USD", the signed content says "NGN"'),
    ("receipt id", lambda d: d["receipt"].update(receipt_id="token-0009-abcdefgh"), "the file's receipt.receipt_id"),
    ("date", lambda d: d["receipt"].update(issue_timestamp="2026-11-21T10:15:00.000Z"),
     "the file's receipt.issue_timestamp"),
    ("type", lambda d: d["receipt"].update(receipt_type="refund"), "the file's receipt.receipt_type"),
    ("merchant id", lambda d: d["merchant"].update(merchant_id="shoprite"), "the file's merchant.merchant_id"),
    ("shop name", lambda d: d["merchant"].update(display_name="Shoprite Lekki (Official)"),
     'the file\'s merchant.display_name is "Shoprite Lekki (Official)", the signed content says "Mama Put"'),
    ("item name", lambda d: d["line_items"][0].update(description="Fried rice"),
     "the file's line_items[0].description"),
    ("item quantity", lambda d: d["line_items"][0].update(quantity=2), "the file's line_items[0].quantity"),
    ("item price", lambda d: d["line_items"][0].update(unit_price=1.0), "the file's line_items[0].unit_price"),
    ("item total", lambda d: d["line_items"][0].update(line_total=1.0), "the file's line_items[0].line_total"),
    ("item id", lambda d: d["line_items"][0].update(line_item_id="JR-2"), "the file's line_items[0].line_item_id"),
    ("item added", lambda d: d["line_items"].append(dict(d["line_items"][0])),
     "the file's line_items has 2 entries, the signed content 1"),
    ("items removed", lambda d: d.update(line_items=[]), "the file's line_items has 0 entries, the signed content 1"),
    ("tax rate", lambda d: d["tax"]["tax_lines"][0].update(rate=0.05), "the file's tax.tax_lines[0].rate"),
    ("taxable", lambda d: d["tax"]["tax_lines"][0].update(base_amount=1.0), "the file's tax.tax_lines[0].base_amount"),
    ("tax", lambda d: d["tax"]["tax_lines"][0].update(tax_amount=0.0), "the file's tax.tax_lines[0].tax_amount"),
    ("tax scheme", lambda d: d["tax"].update(tax_scheme="GST"), "the file's tax.tax_scheme"),
    ("tax removed", lambda d: d.pop("tax"), 'the file has no tax, the signed content says {"tax_scheme": "VAT"'),
    ("payment method", lambda d: d["payment"].update(payment_method="cash"), "the file's payment.payment_method"),
    ("card brand", lambda d: d["payment"].update(provider="mastercard"), "the file's payment.provider"),
    ("authorisation added", lambda d: d["payment"].update(authorization_code="X1"),
     "the file has payment.authorization_code, which the signed content has none of"),
    ("token", lambda d: d["extensions"]["receco"].update(token="token-0009-abcdefgh"),
     "the file's extensions.receco.token"),
    ("short code", lambda d: d["extensions"]["receco"].update(short_code="K00009"),
     "the file's extensions.receco.short_code"),
    ("number", lambda d: d["extensions"]["receco"].update(receipt_number="MP-2026-000099"),
     'the file\'s extensions.receco.receipt_number is "MP-2026-000099", the signed content says "MP-2026-000003"'),
    ("live", lambda d: d["extensions"]["receco"].update(livemode=False), "the file's extensions.receco.livemode"),
    ("subtotal", lambda d: d["extensions"]["receco"].update(subtotal=1.0), "the file's extensions.receco.subtotal"),
    ("discount", lambda d: d["extensions"]["receco"].update(discount=1.0), "the file's extensions.receco.discount"),
    ("tip", lambda d: d["extensions"]["receco"].update(tip=1.0), "the file's extensions.receco.tip"),
    ("inclusive", lambda d: d["extensions"]["receco"].update(tax_lines_inclusive=[False]),
     "the file's extensions.receco.tax_lines_inclusive[0]"),
    ("card", lambda d: d["extensions"]["receco"].update(card_last4="0000"), "the file's extensions.receco.card_last4"),
    ("refund of", lambda d: d["extensions"]["receco"].update(refund_of="token-0001-abcdefgh"),
     "the file's extensions.receco.refund_of"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), [edit[1:] for edit in EDITS], ids=[edit[0] for edit in EDITS])
def test_a_field_the_signature_states_changed_in_the_file_is_named(files, capsys, change, message):
    assert main(files(_edited(orf_file(files.bundles[2]), change))) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"NOT VERIFIED: {message}"), err
    assert err.endswith(": the file was changed after it was signed\n"), err


@pytest.mark.parametrize(("change", "message"), [edit[1:] for edit in EDITS[:3]], ids=[e[0] for e in EDITS[:3]])
def test_so_is_one_in_a_file_not_in_the_log_yet(files, capsys, change, message):
    assert main(files(_edited(orf_file(files.bundles[2], logged=False), change))) == 1
    out, err = capsys.readouterr()
    assert "SIGNED" not in out
    assert err.startswith(f"NOT VERIFIED: {message}"), err


def test_what_the_content_does_not_state_may_differ(files, capsys):
    # The merchant's record as it is now, the receipt's status, title and refunds are not signed.
    document = _edited(orf_file(files.bundles[2]), lambda d: d["merchant"].update(legal_name="Renamed Ltd"))
    document["receipt"]["status"] = "voided"
    document["extensions"]["receco"].update(status="voided", title="Voided")
    document["tax"]["tax_lines"][0]["jurisdiction"] = "GH"
    assert main(files(document)) == 0, capsys.readouterr().err


def _refund_bundle(signer, version: int) -> dict:
    """A refund of receipt 0, alone in its log, signed in ``version``: from version 3 its
    content states its share of its sale's tax lines and card; before, none of its own."""
    refund = content(7, signer.kid, version)
    refund.update(type="refund", refund_of={"token": "token-0000-abcdefgh", "short_code": "K00000",
                  "lines": [{"index": 0, "quantity": 1}], "reason": None})  # fmt: skip
    if version < 3:
        refund.update(tax_lines=[], payment={**refund["payment"], "card_brand": None, "card_last4": None})
    return _single(signer, refund)


def test_a_refunds_share_of_its_sales_tax_is_checked_from_version_3(files, capsys):
    document = orf_file(_refund_bundle(files.signer, 3))
    assert main(files(document)) == 0, capsys.readouterr().err
    assert main(files(_edited(document, lambda d: d["extensions"]["receco"].update(refunded_items=[])))) == 1
    assert "the file's extensions.receco.refunded_items has 0 entries, the signed content 1" in capsys.readouterr().err
    assert main(files(_edited(document, lambda d: d["tax"]["tax_lines"][0].update(tax_amount=9.0)))) == 1
    assert "NOT VERIFIED: the file's tax.tax_lines[0].tax_amount is 9.0" in capsys.readouterr().err


def test_before_version_3_a_refunds_file_shows_a_share_its_signature_does_not_state(files, capsys):
    # Version 2 signed the refund's own (empty) tax lines and card, while its file shows its
    # sale's share, as it always did: the file stays verifiable, those fields unchecked.
    document = orf_file(_refund_bundle(files.signer, 2))
    document["tax"] = {"tax_scheme": "VAT", "tax_lines": [{"rate": 0.075, "base_amount": 9.37, "tax_amount": 0.7}]}
    document["payment"].update(provider="visa")
    document["extensions"]["receco"].update(card_last4="4242", tax_lines_inclusive=[True])
    assert main(files(document)) == 0, capsys.readouterr().err
    assert main(files(_edited(document, lambda d: d.update(total=d["total"] + 1)))) == 1  # its total is signed
    assert "the file's total is" in capsys.readouterr().err


# --- Test receipts, and who issued a receipt ------------------------------------------------


def test_the_merchant_and_its_checked_identity_are_printed(files, capsys):
    assert main(files(orf_file(files.bundles[2]))) == 0
    assert "  merchant: m_1, identity checked by Receco: Mama Put Foods Ltd, RC1234567\n" in capsys.readouterr().out


def test_a_merchant_nobody_checked_is_said_to_be_so(files, capsys):
    unchecked = content(0, files.signer.kid)
    unchecked["merchant"].update(identity=None, name="Shoprite Lekki (Official)")
    bundle = _single(files.signer, unchecked)
    assert main(files(orf_file(bundle))) == 0
    out = capsys.readouterr().out
    assert '  merchant: m_1, identity not checked by Receco; the name "Shoprite Lekki (Official)" is its own\n' in out


def test_a_signed_test_receipt_is_verified_as_one_and_exits_3(files, capsys):
    # Test receipts signed before Receco stopped signing them stay genuine, and stay tests.
    test = {**content(0, files.signer.kid), "livemode": False}
    assert main(files(orf_file(_single(files.signer, test)))) == 3
    out, err = capsys.readouterr()
    assert "VERIFIED TEST receipt K00000 (token-0000-abcdefgh)" in out
    assert err == (
        "NOT A PURCHASE: a test receipt: made with a test key or for a test merchant, by anyone, under any name; "
        "no purchase\n"
    )


def test_an_unsigned_test_receipts_file_says_what_it_is(files, capsys):
    document = orf_file(files.bundles[0])
    del document["trust"]
    document["extensions"]["receco"]["livemode"] = False
    assert main(files(document)) == 1
    assert capsys.readouterr().err == (
        "NOT VERIFIED: a test receipt: made with a test key or for a test merchant, by anyone, under any name; "
        "no purchase. Receco does not sign test receipts\n"
    )


def _single(signer, item: dict) -> dict:
    leaf = merkle.leaf_hash(canonicalize(item))
    signature = base64.b64encode(signer.private.sign(canonicalize(item))).decode()
    return {"content": item, "signature": signature, "leaf_index": 0, "tree_size": 1, "inclusion": [],
            "checkpoint": signer.checkpoint(1, leaf)}  # fmt: skip
