"""Every kind of receipt as an Open Receipt Format 0.1 document, validated against the
published schema (tests/receipts/schemas/orf-0.1.json) with jsonschema."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests.helpers import bearer

pytestmark = pytest.mark.django_db

SCHEMA = json.loads((Path(__file__).parents[1] / "schemas" / "orf-0.1.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=FormatChecker())


@pytest.fixture
def identified(merchant):
    merchant.legal_name = "Mama Put Foods Ltd"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.registration_number = "RC1234567"
    merchant.save()
    return merchant


def _orf(api, token, **headers):
    status, body = api.get("getReceipt", {"token": token, "format": "orf"}, **headers)
    assert status == 200, body
    document = body["result"]["data"]
    errors = sorted(VALIDATOR.iter_errors(document), key=str)
    assert errors == [], [error.message for error in errors]
    return document


def test_a_sale_with_vat(api, identified, receipt_factory):
    sale = receipt_factory(
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}],
        total_amount=139750,
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    )
    document = _orf(api, sale.token)
    assert document["orf_version"] == "0.1.0"
    assert document["receipt"] == {
        "receipt_id": sale.token,
        "issue_timestamp": "2026-11-22T10:15:00.000Z",
        "receipt_type": "sale",
        "status": "issued",
    }
    assert document["merchant"] == {
        "merchant_id": "mama-put",
        "legal_name": "Mama Put Foods Ltd",
        "display_name": "Mama Put Kitchen",
        "country_code": "NG",
        "tax_identifiers": [
            {"scheme": "NG_TIN", "value": "12345678-0001"},
            {"scheme": "NG_CAC", "value": "RC1234567"},
        ],
    }
    assert document["total"] == 1397.5
    assert document["line_items"][0] == {
        "line_item_id": "1", "description": "Jollof rice", "quantity": 2, "unit_price": 500.0, "line_total": 1000.0,
    }  # fmt: skip
    assert document["tax"] == {
        "tax_scheme": "VAT",
        "tax_lines": [{"rate": 0.075, "base_amount": 1300.0, "tax_amount": 97.5, "jurisdiction": "NG"}],
    }
    assert document["payment"] == {"payment_method": "card", "provider": "visa", "authorization_code": "A1B2C3"}
    assert document["extensions"]["receco"]["card_last4"] == "4242"
    assert document["extensions"]["receco"]["short_code"] == "K7P2QX"


def test_a_sale_without_tax_or_identity(api, stored):
    document = _orf(api, stored.token)
    assert "tax" not in document
    assert document["merchant"]["legal_name"] == "Mama Put Kitchen"  # the display name when none is recorded


def test_a_refund_and_the_refunded_sale(api, identified, stored, live_key):
    _, body = api.post("refundReceipt", {"token": stored.token, "amount": 30000}, **bearer(live_key))
    refund = _orf(api, body["result"]["data"]["token"])
    assert refund["receipt"]["receipt_type"] == "refund"
    assert refund["total"] == 300.0
    assert refund["extensions"]["receco"]["refund_of"] == stored.token
    sale = _orf(api, stored.token)
    assert sale["extensions"]["receco"]["status"] == "partially_refunded"
    assert [entry["amount"] for entry in sale["extensions"]["receco"]["refunds"]] == [300.0]


def test_a_refund_of_a_vat_sale_gives_its_share_of_the_tax_and_the_card(api, identified, receipt_factory, live_key):
    sale = receipt_factory(
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}],
        total_amount=139750,
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    )
    request = {"token": sale.token, "items": [{"index": 0, "quantity": 1}]}
    _, body = api.post("refundReceipt", request, **bearer(live_key))
    refund = _orf(api, body["result"]["data"]["token"])
    assert refund["receipt"]["receipt_type"] == "refund"
    assert refund["total"] == 537.5
    assert refund["tax"] == {
        "tax_scheme": "VAT",
        "tax_lines": [{"rate": 0.075, "base_amount": 500.0, "tax_amount": 37.5, "jurisdiction": "NG"}],
    }
    assert refund["payment"] == {"payment_method": "card", "provider": "visa", "authorization_code": "A1B2C3"}
    receco = refund["extensions"]["receco"]
    assert (receco["title"], receco["card_last4"]) == ("Refund receipt", "4242")
    assert receco["refunded_items"] == [{"index": 0, "quantity": 1}]
    assert refund["merchant"]["tax_identifiers"][1] == {"scheme": "NG_CAC", "value": "RC1234567"}
    sold = _orf(api, sale.token)
    assert sold["extensions"]["receco"]["title"] == "VAT receipt"
    assert sold["extensions"]["receco"]["refunded_items"] == [{"index": 0, "quantity": 1}]


def test_a_voided_sale(api, stored, live_key):
    api.post("voidReceipt", {"token": stored.token}, **bearer(live_key))
    document = _orf(api, stored.token)
    assert document["receipt"]["status"] == "voided"
    assert document["extensions"]["receco"]["title"] == "Voided"


def test_amounts_follow_the_currencys_exponent(api, receipt_factory):
    yen = receipt_factory(currency="JPY", total_amount=1500, items=[
        {"name": "Onigiri", "quantity": 3, "unit_price": 500, "total_price": 1500}])  # fmt: skip
    document = _orf(api, yen.token)
    assert (document["total"], document["line_items"][0]["unit_price"]) == (1500, 500)


def test_another_format_is_refused(api, stored):
    status, body = api.get("getReceipt", {"token": stored.token, "format": "pdf"})
    assert status == 400
    assert body["error"]["message"] == 'format: Must be "orf", or absent for the receipt as it is'


def test_the_check_fails_a_document_the_schema_refuses():
    assert list(VALIDATOR.iter_errors({"orf_version": "0.1.0"}))


def test_the_check_reads_dates_too():
    # jsonschema checks "date-time" only with rfc3339-validator installed (requirements-dev.txt).
    document = {"orf_version": "0.1.0", "receipt": {"receipt_id": "r", "issue_timestamp": "yesterday",
                "receipt_type": "sale"}, "merchant": {"legal_name": "x", "country_code": "NG"},
                "line_items": [{"description": "x", "quantity": 1, "unit_price": 1, "line_total": 1}],
                "total": 1, "currency": "NGN"}  # fmt: skip
    assert [error.message for error in VALIDATOR.iter_errors(document)] == ["'yesterday' is not a 'date-time'"]


def test_the_shops_time_zone_is_carried_for_the_verify_page(api, merchant, receipt):
    # Unsigned, from the merchant as it is now: /app/verify shows the times in it, as the receipt's page does.
    merchant.time_zone = "Africa/Nairobi"
    merchant.save()
    assert _orf(api, receipt.token)["extensions"]["receco"]["time_zone"] == "Africa/Nairobi"
