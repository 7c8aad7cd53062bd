"""The Apple Wallet pass of a receipt: a zip Wallet accepts, signed so that openssl
verifies it against the chain, saying what the receipt says and nothing of the customer."""

import hashlib
import io
import json
import re
import zipfile

import pytest
from cryptography.hazmat.primitives.serialization import pkcs7
from PIL import Image

from receipts.wallet import apple, credentials
from receipts.wallet.card import pass_id
from tests.receipts.wallet.support import PASS_TYPE_ID, TEAM_ID, openssl_verify
from tests.servers import ROOT

pytestmark = pytest.mark.django_db

PAGE = "https://receipts.example.test/app/receipt"


def _files(receipt) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(apple.pkpass(receipt, credentials.apple()))) as archive:
        assert archive.testzip() is None
        return {name: archive.read(name) for name in archive.namelist()}


def _pass(receipt) -> dict:
    return json.loads(_files(receipt)["pass.json"])


def test_the_pass_holds_its_files_and_a_manifest_of_their_sha1(apple_on, receipt):
    files = _files(receipt)
    assert sorted(files) == ["icon.png", "icon@2x.png", "icon@3x.png", "manifest.json", "pass.json", "signature"]
    manifest = json.loads(files["manifest.json"])
    assert set(manifest) == set(files) - {"manifest.json", "signature"}
    for name, digest in manifest.items():
        assert digest == hashlib.sha1(files[name], usedforsecurity=False).hexdigest(), name


def test_the_icons_are_the_sizes_apple_asks_for(apple_on, receipt):
    files = _files(receipt)
    sizes = {name: Image.open(io.BytesIO(files[name])).size for name in ("icon.png", "icon@2x.png", "icon@3x.png")}
    assert sizes == {"icon.png": (29, 29), "icon@2x.png": (58, 58), "icon@3x.png": (87, 87)}


def test_openssl_verifies_the_signature_of_the_manifest_against_the_chain(apple_on, receipt, tmp_path):
    files = _files(receipt)
    (tmp_path / "manifest.json").write_bytes(files["manifest.json"])
    (tmp_path / "signature").write_bytes(files["signature"])
    result = openssl_verify(tmp_path / "signature", tmp_path / "manifest.json", apple_on.folder / "root.pem")
    assert result.returncode == 0, result.stderr
    assert "Verification successful" in result.stderr


def test_a_changed_manifest_fails_the_verification(apple_on, receipt, tmp_path):
    files = _files(receipt)
    (tmp_path / "manifest.json").write_bytes(files["manifest.json"].replace(b'"pass.json": "', b'"pass.json": "0'))
    (tmp_path / "signature").write_bytes(files["signature"])
    result = openssl_verify(tmp_path / "signature", tmp_path / "manifest.json", apple_on.folder / "root.pem")
    assert result.returncode != 0
    assert "digest failure" in result.stderr


def test_the_signature_is_detached_and_carries_the_pass_certificate_and_wwdr(apple_on, receipt):
    signature = _files(receipt)["signature"]
    # A SET in DER: in the order of their encodings, not the order they were added.
    assert set(pkcs7.load_der_pkcs7_certificates(signature)) == {apple_on.certificate, apple_on.wwdr}
    # Detached: the manifest is not inside the signature.
    assert b'"pass.json"' not in signature


def test_the_pass_says_what_the_receipt_says(apple_on, receipt):
    document = _pass(receipt)
    assert {key: document[key] for key in ("formatVersion", "passTypeIdentifier", "teamIdentifier")} == {
        "formatVersion": 1,
        "passTypeIdentifier": PASS_TYPE_ID,
        "teamIdentifier": TEAM_ID,
    }
    assert document["serialNumber"] == pass_id(receipt)
    assert re.fullmatch("[0-9a-f]{40}", document["serialNumber"])
    assert document["organizationName"] == document["logoText"] == "Mama Put Kitchen"
    assert document["description"] == "Receipt from Mama Put Kitchen: Total paid ₦1,300.00"
    generic = document["generic"]
    assert generic["headerFields"] == []
    assert generic["primaryFields"] == [{"key": "total", "label": "Total paid", "value": "₦1,300.00"}]
    assert generic["secondaryFields"] == [{"key": "date", "label": "Date", "value": "Sun 22 Nov 2026, 11:15 WAT"}]
    assert generic["auxiliaryFields"] == [{"key": "code", "label": "Receipt code", "value": "K7P2QX"}]
    assert document["barcodes"] == [
        {
            "format": "PKBarcodeFormatQR",
            "message": f"{PAGE}/K7P2QX",
            "messageEncoding": "iso-8859-1",
            "altText": "K7P2QX",
        }
    ]
    assert "voided" not in document


def test_the_back_has_the_link_the_items_and_the_issuer(apple_on, merchant, receipt):
    merchant.legal_name, merchant.address, merchant.return_policy = "Mama Put Foods Ltd", "1 Admiralty Way", "7 days"
    merchant.save()
    back = {field["key"]: field for field in _pass(receipt)["generic"]["backFields"]}
    assert back["back_link"] == {
        "key": "back_link",
        "label": "Your receipt",
        "value": f"{PAGE}/K7P2QX",
        "attributedValue": f'<a href="{PAGE}/K7P2QX">Open the receipt</a>',
    }
    assert back["back_items"]["value"] == "2 × Jollof rice: ₦1,000.00\n1 × Chapman: ₦300.00"
    assert back["back_payment"]["value"] == "Card"
    assert back["back_location"]["value"] == "Lekki Phase 1"
    assert back["back_issued"]["value"] == "22 November 2026, 11:15 WAT"
    assert back["back_issuer"]["value"] == "Mama Put Foods Ltd\n1 Admiralty Way"
    assert back["back_returns"]["value"] == "7 days"
    keys = [field["key"] for part in _pass(receipt)["generic"].values() for field in part]
    assert len(keys) == len(set(keys)), "pass.json keys must be unique"


def test_the_shops_colour_with_readable_text(apple_on, receipt):
    document = _pass(receipt)
    assert document["backgroundColor"] == "rgb(194, 65, 12)"  # the merchant's #c2410c
    assert document["foregroundColor"] == document["labelColor"] == "rgb(255, 255, 255)"


def test_a_sale_made_without_the_key_leaves_its_free_text_and_token_off_the_pass(apple_on, receipt_factory):
    receipt = receipt_factory(keyed=False, token="Call-08031234567-now", short_code="FREE01")
    files = _files(receipt)
    back = {field["key"] for field in json.loads(files["pass.json"])["generic"]["backFields"]}
    assert not back & {"back_items", "back_location", "back_payment", "back_status"}
    assert all(b"08031234567" not in data for data in files.values())
    assert json.loads(files["pass.json"])["barcodes"][0]["message"] == f"{PAGE}/FREE01"


def test_the_pass_never_holds_the_customers_contact(apple_on, receipt_factory, mailoutbox):
    receipt = receipt_factory(customer_email="ada.customer@example.com", customer_phone="+2348031234567")
    for name, data in _files(receipt).items():
        for contact in (b"ada.customer", b"8031234567"):
            assert contact not in data, name


def test_a_voided_sale_gives_a_voided_pass(apple_on, receipt):
    from receipts.refunds import void

    void(receipt, "Rung up twice", keyed=True)
    receipt.refresh_from_db()
    document = _pass(receipt)
    assert document["voided"] is True
    assert document["generic"]["primaryFields"][0]["label"] == "Voided"
    back = {field["key"]: field["value"] for field in document["generic"]["backFields"]}
    assert back["back_void"].startswith("Cancelled on ")
    assert back["back_void"].endswith(": Rung up twice")


def test_a_test_receipt_says_so_on_its_front(apple_on, test_receipt):
    generic = _pass(test_receipt)["generic"]
    assert generic["headerFields"] == [{"key": "test", "label": "Test", "value": "Not a real sale"}]


def test_the_serial_number_is_the_same_each_time_and_differs_between_receipts(apple_on, receipt, stored):
    assert _pass(receipt)["serialNumber"] == _pass(receipt)["serialNumber"]
    assert _pass(receipt)["serialNumber"] != _pass(stored)["serialNumber"]


def test_a_refund_and_its_sale_say_so(apple_on, receipt):
    from receipts.refunds import refund, validate_refund

    given = refund(
        receipt, validate_refund({"token": receipt.token, "items": [{"index": 1, "quantity": 1}]}), keyed=True
    )
    receipt.refresh_from_db()
    sale = {field["key"]: field for field in _pass(receipt)["generic"]["backFields"]}
    assert sale["back_refunds"]["label"] == "Refunded: ₦300.00"
    assert sale["back_refunds"]["value"] == f"Refund {given.receipt.short_code}: ₦300.00"
    refund_pass = _pass(given.receipt)
    assert refund_pass["generic"]["primaryFields"] == [{"key": "total", "label": "Refunded to you", "value": "₦300.00"}]
    back = {field["key"]: field["value"] for field in refund_pass["generic"]["backFields"]}
    assert back["back_refund_of"] == "Receipt K7P2QX"


def test_the_serial_number_is_what_docs_wallet_md_says(apple_on, receipt):
    """An integrator computed it from the doc's formula, which left out its prefix."""
    doc = (ROOT / "docs" / "wallet.md").read_text()
    formula = re.search(r'first 40\s+hex digits of `SHA-256\("([^"]*)" \+ address\)`', doc)
    assert formula, "docs/wallet.md states the serial number's formula"
    said = hashlib.sha256(f"{formula[1]}{receipt.public_url}".encode()).hexdigest()[:40]
    assert _pass(receipt)["serialNumber"] == said
    assert "`https://receipts.example.com/app/receipt/<token>`" in doc  # the address is by token
