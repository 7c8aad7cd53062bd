import pytest

from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db


def test_it_returns_every_field_of_the_receipt(api, receipt, merchant):
    status, body = api.get("getReceipt", {"token": receipt.token})
    assert status == 200
    created = receipt.created_at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{receipt.created_at.microsecond // 1000:03d}Z"
    assert body == {
        "result": {
            "data": {
                "id": receipt.pk,
                "token": "rcpt_mfx3k2a1_q8z0lp",
                "short_code": "K7P2QX",
                "merchant_id": merchant.pk,
                "merchant_name": "Mama Put Kitchen",
                "merchant_logo": "https://cdn.example.com/mama-put.png",
                "accent_color": "#c2410c",
                "total_amount": 130000,
                "currency": "NGN",
                "transaction_date": "2026-11-22T10:15:00.000Z",
                "items": [
                    {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
                    {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
                ],
                "category": "restaurant",
                "payment_method": "card",
                "location": "Lekki Phase 1",
                "status": "completed",
                "customer_email": None,
                "customer_phone": None,
                "created_at": created,
                "updated_at": body["result"]["data"]["updated_at"],
                # After the 19 fields every client knows: the breakdown, payment and refunds.
                "subtotal_amount": None,
                "discount_amount": None,
                "tip_amount": None,
                "tax_lines": [],
                "payment_details": None,
                "receipt_type": "sale",
                "refund_of": None,
                "refunds": [],
                # What a tax receipt states: its number, what it is, its issuer's registration.
                "receipt_number": receipt.receipt_number,
                "title": "Receipt",
                "merchant_registration_number": None,
            }
        }
    }
    assert receipt.receipt_number.startswith("MAMAPU-")
    assert list(body["result"]["data"])[:19] == [
        "id", "token", "short_code", "merchant_id", "merchant_name", "merchant_logo", "accent_color",
        "total_amount", "currency", "transaction_date", "items", "category", "payment_method", "location",
        "status", "customer_email", "customer_phone", "created_at", "updated_at",
    ]  # fmt: skip
    assert body["result"]["data"]["updated_at"].endswith("Z")


def test_it_finds_a_receipt_by_short_code(api, receipt):
    status, body = api.get("getReceipt", {"token": "K7P2QX"})
    assert status == 200
    assert body["result"]["data"]["token"] == receipt.token


def test_it_trims_and_uppercases_short_codes(api, receipt):
    status, body = api.get("getReceipt", {"token": " k7p2qx "})
    assert status == 200
    assert body["result"]["data"]["id"] == receipt.pk


def test_tokens_are_case_sensitive(api, receipt):
    status, body = api.get("getReceipt", {"token": receipt.token.upper()})
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")


def test_it_answers_not_found_for_an_unknown_token(api, db):
    status, body = api.get("getReceipt", {"token": "rcpt_unknown_000000"})
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")


def test_it_answers_not_found_for_an_unknown_short_code(api, db):
    status, body = api.get("getReceipt", {"token": "ZZZZZZ"})
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")


@pytest.mark.parametrize(
    "token",
    [
        "abc",
        "has spaces in it",
        "rcpt_<script>",
        "x" * 65,
        "K7P2Q!",
        123456,
        "",
        # Unicode case mapping turns these into ASCII codes ("ſ".upper() == "S"): refused.
        "ſſſſſſ",
        "ıııııı",
        "ﬀﬀﬀ",
        "\u2003K7P2QX",
        "rcpt_ſtored01_aaaaaa",
    ],
)
def test_it_rejects_a_malformed_token(api, db, token):
    status, body = api.get("getReceipt", {"token": token})
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "Invalid token format", "getReceipt")


def test_a_unicode_lookalike_does_not_find_an_ascii_code(api, receipt_factory):
    receipt_factory(short_code="SSSSSS")
    status, body = api.get("getReceipt", {"token": "ſſſſſſ"})
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "Invalid token format", "getReceipt")


def test_it_requires_a_token(api, db):
    status, body = api.get("getReceipt", {})
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "token: This field is required", "getReceipt")


def test_it_requires_an_input(api, db):
    status, body = api.get("getReceipt")
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "Input must be a JSON object", "getReceipt")


def test_it_rejects_an_input_that_is_not_json(api, db):
    status, body = api.get("getReceipt", raw_input="{token:")
    assert status == 400
    assert body["error"]["data"] == {"code": "INVALID_INPUT", "httpStatus": 400, "path": "getReceipt"}
    assert body["error"]["message"].startswith("The input parameter is not valid JSON: ")


def test_it_masks_contact_data(api, receipt):
    receipt.customer_email = "customer@example.com"
    receipt.customer_phone = "+2348031234589"
    receipt.save()
    status, body = api.get("getReceipt", {"token": receipt.token})
    assert status == 200
    assert body["result"]["data"]["customer_email"] == "c*******@example.com"
    assert body["result"]["data"]["customer_phone"] == "+234*******89"


def test_it_refuses_post(api, receipt):
    status, body = api.post("getReceipt", {"token": receipt.token})
    assert status == 405
    assert body == error_envelope(
        405, "METHOD_NOT_SUPPORTED", "getReceipt is a query: call it with GET, not POST", "getReceipt"
    )
