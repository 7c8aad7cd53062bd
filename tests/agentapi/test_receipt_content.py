"""What a sale may give beyond its total: subtotal, discount, tip, tax lines, payment details."""

import pytest

from receipts.models import Receipt
from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"


@pytest.fixture
def vat_sale(sale):
    """A Lagos restaurant's sale with 7.5 % VAT on top of the prices, a discount and a tip."""
    return {
        **sale,
        "subtotal_amount": 130000,
        "discount_amount": 10000,
        "tax_lines": [
            {"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False},
        ],
        "tip_amount": 5000,
        "total_amount": 134000,
        "payment_details": {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    }


def invalid(message):
    return error_envelope(400, "INVALID_INPUT", message, PATH)


def test_it_stores_and_returns_the_breakdown(api, vat_sale):
    status, body = api.post(PATH, vat_sale)
    assert status == 200, body
    _, read = api.get("getReceipt", {"token": vat_sale["token"]})
    data = read["result"]["data"]
    assert (data["subtotal_amount"], data["discount_amount"], data["tip_amount"]) == (130000, 10000, 5000)
    assert data["tax_lines"] == [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False}
    ]
    assert data["payment_details"] == {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"}


def test_inclusive_tax_adds_nothing_to_the_total(api, sale):
    sale.update(
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
    )
    assert api.post(PATH, sale)[0] == 200


def test_a_partial_payment_details_keeps_the_rest_null(api, sale):
    api.post(PATH, {**sale, "payment_details": {"card_last4": "0005"}})
    _, read = api.get("getReceipt", {"token": sale["token"]})
    assert read["result"]["data"]["payment_details"] == {
        "card_brand": None,
        "card_last4": "0005",
        "authorization_code": None,
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"subtotal_amount": 120000}, "subtotal_amount: Must equal the sum of the items' total_price (130000)"),
        (
            {"total_amount": 134001},
            "total_amount: Must equal subtotal_amount - discount_amount + the tax_amount of the tax_lines that "
            "are not inclusive + tip_amount (134000)",
        ),
        ({"discount_amount": -1}, "discount_amount: Ensure this value is greater than or equal to 0"),
        ({"tip_amount": "50"}, "tip_amount: Must be a JSON integer, not a string or a decimal"),
        ({"tax_lines": {"name": "VAT"}}, 'tax_lines: Expected a list of items but got type "dict"'),
        (
            {"tax_lines": [{"name": "VAT", "rate": "7.5", "taxable_amount": 1, "tax_amount": 1}]},
            "tax_lines[0].rate: Must be a JSON number, not a string",
        ),
        (
            {"tax_lines": [{"name": "VAT", "rate": 101, "taxable_amount": 1, "tax_amount": 1}]},
            "tax_lines[0].rate: Ensure this value is less than or equal to 100",
        ),
        (
            {"tax_lines": [{"name": "VAT", "rate": 7.5, "taxable_amount": 1, "tax_amount": 1, "inclusive": "no"}]},
            "tax_lines[0].inclusive: Must be true or false",
        ),
        (
            {"tax_lines": [{"rate": 7.5, "taxable_amount": 1, "tax_amount": 1}]},
            "tax_lines[0].name: This field is required",
        ),
        (
            {"payment_details": {"card_last4": "42"}},
            "payment_details.card_last4: Must be the last 4 digits of the card",
        ),
        (
            {"payment_details": {"card_last4": "424x"}},
            "payment_details.card_last4: Must be the last 4 digits of the card",
        ),
        (
            {"payment_details": {"card_last4": "4242", "card_number": "4111111111111111"}},
            "payment_details: Must not hold a card number (12 or more digits in a row)",
        ),
        (
            {"payment_details": {"authorization_code": "4111 1111 1111 1111"}},
            "payment_details: Must not hold a card number (12 or more digits in a row)",
        ),
        (
            {"payment_details": {"pan": 4111111111111111}},
            "payment_details: Must not hold a card number (12 or more digits in a row)",
        ),
    ],
)
def test_it_names_what_does_not_add_up(api, vat_sale, change, message):
    status, body = api.post(PATH, {**vat_sale, **change})
    assert status == 400
    assert body == invalid(message)
    assert not Receipt.objects.exists()


def test_no_card_number_is_stored_anywhere(api, vat_sale):
    api.post(PATH, {**vat_sale, "payment_details": {"card_last4": "4242", "note": "4111-1111-1111-1111"}})
    assert not Receipt.objects.exists()


def test_a_sale_without_a_subtotal_is_not_held_to_the_sums(api, sale):
    sale.update(tip_amount=500, discount_amount=100)  # the POS gives parts, not the whole breakdown
    assert api.post(PATH, sale)[0] == 200


def test_a_sale_without_a_breakdown_has_the_fingerprint_it_had_before_there_was_one(sale):
    # So the replay of a sale stored before these fields existed still matches it.
    import hashlib
    import json

    from receipts.validation import sale_fingerprint, validate_sale

    validated = validate_sale(sale)
    later = {"subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details", "terminal_id"}
    later.add("customer_phone_channel")
    before = {k: v for k, v in validated.items() if k not in later and k != "short_code"}
    encoded = json.dumps(before, sort_keys=True, separators=(",", ":"), default=lambda value: value.isoformat())
    assert sale_fingerprint(validated) == hashlib.sha256(encoded.encode()).hexdigest()


def test_a_null_tax_line_is_refused(api, vat_sale):
    # Found by fuzzing (tests/agentapi/test_openapi_fuzz.py): it was a 500.
    status, body = api.post(PATH, {**vat_sale, "tax_lines": [None]})
    assert (status, body) == (400, invalid("tax_lines[0]: This field may not be null"))
    assert not Receipt.objects.exists()
