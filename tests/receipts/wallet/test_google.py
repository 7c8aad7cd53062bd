"""The Google Wallet save link of a receipt: a JWT that the service account's public key
verifies, for Google, holding a generic pass object of the receipt and nothing of the
customer."""

import base64
import json
from datetime import UTC, datetime

import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from receipts.wallet import credentials, google
from receipts.wallet.card import pass_id
from tests.receipts.wallet.support import ISSUER_ID, KEY_ID, SERVICE_ACCOUNT

pytestmark = pytest.mark.django_db

PAGE = "https://receipts.example.test/app/receipt"
NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _token(receipt) -> str:
    url = google.save_url(receipt, credentials.google(), now=NOW)
    assert url.startswith("https://pay.google.com/gp/v/save/")
    return url.removeprefix("https://pay.google.com/gp/v/save/")


def _claims(receipt, google_key) -> dict:
    return jwt.decode(_token(receipt), google_key.public_key(), algorithms=["RS256"], audience="google")


def test_the_jwt_decodes_with_the_service_accounts_public_key(google_on, receipt):
    claims = _claims(receipt, google_on)
    assert {key: value for key, value in claims.items() if key != "payload"} == {
        "iss": SERVICE_ACCOUNT,
        "aud": "google",
        "typ": "savetowallet",
        "iat": int(NOW.timestamp()),
        "origins": ["https://receipts.example.test"],
    }
    assert jwt.get_unverified_header(_token(receipt)) == {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}


def test_the_signature_is_rs256_of_header_and_claims(google_on, receipt):
    """Checked without PyJWT too: PKCS#1 v1.5 over SHA-256 of the first two parts."""
    header, claims, signature = _token(receipt).split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    google_on.public_key().verify(raw, f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())


def test_another_key_does_not_verify_it(google_on, receipt):
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(_token(receipt), other.public_key(), algorithms=["RS256"], audience="google")


def test_the_object_is_the_receipts_generic_pass(google_on, receipt):
    payload = _claims(receipt, google_on)["payload"]
    assert payload["genericClasses"] == [{"id": f"{ISSUER_ID}.receco_receipt"}]
    (card,) = payload["genericObjects"]
    assert card == {
        "id": f"{ISSUER_ID}.{pass_id(receipt)}",
        "classId": f"{ISSUER_ID}.receco_receipt",
        "state": "ACTIVE",
        "cardTitle": {"defaultValue": {"language": "en-US", "value": "Mama Put Kitchen"}},
        "subheader": {"defaultValue": {"language": "en-US", "value": "Total paid"}},
        "header": {"defaultValue": {"language": "en-US", "value": "₦1,300.00"}},
        "hexBackgroundColor": "#c2410c",
        "barcode": {"type": "QR_CODE", "value": f"{PAGE}/K7P2QX", "alternateText": "K7P2QX"},
        "textModulesData": [{"id": "issued", "header": "Date", "body": "22 November 2026, 11:15 WAT"}],
        "linksModuleData": {"uris": [{"id": "receipt", "uri": f"{PAGE}/K7P2QX", "description": "Open the receipt"}]},
    }


def test_a_voided_sale_is_saved_inactive(google_on, receipt):
    from receipts.refunds import void

    void(receipt, None, keyed=True)
    receipt.refresh_from_db()
    (card,) = _claims(receipt, google_on)["payload"]["genericObjects"]
    assert card["state"] == "INACTIVE"
    assert card["subheader"]["defaultValue"]["value"] == "Voided"
    assert [module["id"] for module in card["textModulesData"]] == ["issued", "void"]


def test_the_link_never_holds_the_customers_contact(google_on, receipt_factory, mailoutbox):
    receipt = receipt_factory(customer_email="ada.customer@example.com", customer_phone="+2348031234567")
    token = _token(receipt)
    text = token + json.dumps(_claims(receipt, google_on), ensure_ascii=False)
    assert "ada.customer" not in text
    assert "8031234567" not in text


def test_the_longest_link_still_fits_and_keeps_the_date(google_on, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.refunds import void
    from receipts.validation import validate_sale

    merchant.name = "₦" * 200  # 600 bytes: the most a name can take
    merchant.save()
    receipt = create_receipt(merchant, validate_sale(sale), livemode=False).receipt
    void(receipt, "₦" * 200, keyed=True)
    receipt.refresh_from_db()
    url = google.save_url(receipt, credentials.google(), now=NOW)
    assert len(url) <= google.LINK_LENGTH == 2000
    (card,) = _claims(receipt, google_on)["payload"]["genericObjects"]
    assert card["cardTitle"]["defaultValue"]["value"] == "₦" * 39 + "…"
    assert card["textModulesData"][0] == {"id": "issued", "header": "Date", "body": "22 November 2026, 11:15 WAT"}


def test_lines_are_left_out_last_first_until_the_link_fits(google_on, receipt, monkeypatch):
    from receipts.refunds import void

    void(receipt, "Rung up twice", keyed=True)
    receipt.refresh_from_db()
    kept = {}
    for length in (2000, len(google.save_url(receipt, credentials.google(), now=NOW)) - 1, 0):
        monkeypatch.setattr(google, "LINK_LENGTH", length)
        (card,) = _claims(receipt, google_on)["payload"]["genericObjects"]
        kept[length] = [module["id"] for module in card["textModulesData"]]
    assert list(kept.values()) == [["issued", "void"], ["issued"], []]
