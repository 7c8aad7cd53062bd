import json
from datetime import timedelta

import pytest
from django.utils import timezone

from merchants.models import Merchant
from receipts.models import Receipt
from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"


def invalid(message: str) -> dict:
    return error_envelope(400, "INVALID_INPUT", message, PATH)


def test_it_creates_a_receipt(api, sale, merchant):
    status, body = api.post(PATH, sale, Authorization="Bearer ")
    assert status == 200
    receipt = Receipt.objects.get()
    assert body == {
        "result": {
            "data": {
                "id": receipt.pk,
                "token": "rcpt_mfx3k2a1_q8z0lp",
                "short_code": "K7P2QX",
                "receipt_url": "https://receipts.example.test/app/receipt/rcpt_mfx3k2a1_q8z0lp",
            }
        }
    }
    assert receipt.merchant == merchant
    assert receipt.total_amount == 130000
    assert receipt.livemode is True
    assert receipt.items[1] == {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000}


def test_the_created_receipt_is_readable(api, sale):
    api.post(PATH, sale)
    status, body = api.get("getReceipt", {"token": "k7p2qx"})
    assert status == 200
    assert body["result"]["data"]["token"] == sale["token"]


def test_it_generates_token_and_short_code_when_omitted(api, sale):
    del sale["token"], sale["short_code"]
    status, body = api.post(PATH, sale)
    assert status == 200
    data = body["result"]["data"]
    assert data["token"].startswith("rcpt_")
    assert len(data["short_code"]) == 6
    assert Receipt.objects.get().token == data["token"]


def test_it_accepts_sdk_tokens_without_the_rcpt_form(api, sale):
    sale["token"] = "k3j9x0a8b7c6d5e4f3g2h1"
    status, body = api.post(PATH, sale)
    assert status == 200
    assert body["result"]["data"]["token"] == "k3j9x0a8b7c6d5e4f3g2h1"


def test_a_whole_number_written_with_a_point_is_that_integer(api, sale):
    """JSON Schema's integer admits 1556.0, and a client generated from the document may
    send it (issue 32.14: refused as "not an integer"). It is 1556, the same sale as 1556:
    a replay with 1556 is the same receipt. A fraction stays refused."""
    sale["total_amount"], sale["items"][0]["quantity"] = 130000.0, 2.0
    status, body = api.post(PATH, sale)
    assert status == 200
    stored = Receipt.objects.get()
    assert (stored.total_amount, type(stored.total_amount)) == (130000, int)
    assert stored.items[0]["quantity"] == 2
    assert type(stored.items[0]["quantity"]) is int
    replay = {**sale, "total_amount": 130000, "items": [{**sale["items"][0], "quantity": 2}, sale["items"][1]]}
    assert api.post(PATH, replay) == (200, body)
    status, refused = api.post(PATH, {**sale, "token": "rcpt_fraction01_aaaaaa", "total_amount": 1556.5})
    assert status == 400
    assert refused["error"]["message"] == "total_amount: Must be a JSON integer, not a string or a decimal"


def test_it_reads_offsets_and_stores_utc(api, sale):
    sale["transaction_date"] = "2026-11-22T11:15:00+01:00"
    api.post(PATH, sale)
    _, body = api.get("getReceipt", {"token": sale["token"]})
    assert body["result"]["data"]["transaction_date"] == "2026-11-22T10:15:00.000Z"


def test_the_date_window_is_from_2000_to_a_day_ahead(api, sale):
    now = timezone.now()
    sale["transaction_date"] = (now + timedelta(hours=23)).isoformat()
    assert api.post(PATH, sale)[0] == 200
    ahead = {**sale, "token": "rcpt_ahead0001_aaaaaa", "transaction_date": (now + timedelta(hours=25)).isoformat()}
    status, body = api.post(PATH, ahead)
    assert status == 400
    assert body == invalid("transaction_date: Must be between 2000-01-01T00:00:00Z and one day from now")
    first = {**sale, "token": "rcpt_y2k00001_aaaaaa", "transaction_date": "2000-01-01T00:00:00Z"}
    assert api.post(PATH, first)[0] == 200


def test_it_reads_a_date_without_offset_as_utc(api, sale):
    sale["transaction_date"] = "2026-11-22T10:15:00"
    api.post(PATH, sale)
    _, body = api.get("getReceipt", {"token": sale["token"]})
    assert body["result"]["data"]["transaction_date"] == "2026-11-22T10:15:00.000Z"


def test_it_applies_defaults(api, sale, merchant):
    for field in ("currency", "transaction_date", "status", "merchant_name", "category", "location"):
        del sale[field]
    status, _ = api.post(PATH, sale)
    assert status == 200
    _, body = api.get("getReceipt", {"token": sale["token"]})
    data = body["result"]["data"]
    assert data["currency"] == "NGN"
    assert data["status"] == "completed"
    assert data["merchant_name"] == "Mama Put Kitchen"
    assert data["category"] is None
    assert data["location"] is None
    assert data["accent_color"] == "#c2410c"
    assert data["transaction_date"].endswith("Z")


def test_it_expands_short_accent_colours(api, sale):
    # Only a test- merchant's sales give their own colour: see test_sale_branding.py.
    sale["accent_color"] = "#F0A"
    sale["merchant_string_id"] = "test-colours"
    api.post(PATH, sale)
    assert Receipt.objects.get().accent_color == "#ff00aa"


def test_it_keeps_skus(api, sale):
    sale["items"][0]["sku"] = "JOL-001"
    api.post(PATH, sale)
    _, body = api.get("getReceipt", {"token": sale["token"]})
    assert body["result"]["data"]["items"][0]["sku"] == "JOL-001"
    assert "sku" not in body["result"]["data"]["items"][1]


def test_it_stores_contact_data_in_normal_form(api, sale):
    sale["customer_email"] = "Ada@Example.COM"
    sale["customer_phone"] = "0803 123 4589"
    api.post(PATH, sale)
    receipt = Receipt.objects.get()
    assert receipt.customer_email == "Ada@example.com"
    assert receipt.customer_phone == "+2348031234589"


def test_it_creates_test_merchants_on_first_use(api, sale):
    sale["merchant_string_id"] = "test-lagos-cafe"
    sale["merchant_name"] = "Lagos Cafe"
    status, _ = api.post(PATH, sale)
    assert status == 200
    merchant = Merchant.objects.get(string_id="test-lagos-cafe")
    assert merchant.name == "Lagos Cafe"
    assert merchant.is_test is True
    assert Receipt.objects.get().livemode is False


def test_it_refuses_an_unknown_merchant(api, sale):
    sale["merchant_string_id"] = "nobody-here"
    status, body = api.post(PATH, sale)
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", "Merchant not found", PATH)
    assert not Merchant.objects.filter(string_id="nobody-here").exists()


def test_it_refuses_a_suspended_merchant(api, sale, merchant):
    merchant.status = Merchant.Status.SUSPENDED
    merchant.save()
    status, body = api.post(PATH, sale)
    assert status == 403
    assert body == error_envelope(403, "FORBIDDEN", "Merchant account is suspended", PATH)
    assert not Receipt.objects.exists()


def test_a_replay_answers_the_original(api, sale):
    _, first = api.post(PATH, sale)
    status, second = api.post(PATH, sale)
    assert status == 200
    assert second == first
    assert Receipt.objects.count() == 1


def test_a_replay_after_a_short_code_change_answers_the_assigned_code(api, sale, merchant, receipt_factory):
    receipt_factory(token="rcpt_other_aaaaaa", short_code="K7P2QX")
    _, first = api.post(PATH, sale)
    status, second = api.post(PATH, sale)
    assert status == 200
    assert second == first
    assert first["result"]["data"]["short_code"] != "K7P2QX"


def test_a_token_reused_for_different_content_is_a_conflict(api, sale):
    api.post(PATH, sale)
    sale["total_amount"] = 999
    status, body = api.post(PATH, sale)
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    assert Receipt.objects.get().total_amount == 130000


def test_a_token_of_another_merchant_is_a_conflict(api, sale, other_merchant):
    other_merchant.require_api_key = False
    other_merchant.save()
    api.post(PATH, sale)
    sale["merchant_string_id"] = other_merchant.string_id
    status, body = api.post(PATH, sale)
    assert status == 409
    assert body["error"]["data"]["code"] == "CONFLICT"


def test_a_taken_short_code_gets_a_fresh_one(api, sale, receipt_factory):
    receipt_factory(token="rcpt_other_aaaaaa", short_code="K7P2QX")
    status, body = api.post(PATH, sale)
    assert status == 200
    code = body["result"]["data"]["short_code"]
    assert code != "K7P2QX"
    assert Receipt.objects.get(token=sale["token"]).short_code == code


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"merchant_string_id": None}, "merchant_string_id: This field may not be null"),
        (
            {"merchant_string_id": "bad id!"},
            "merchant_string_id: Use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        ),
        ({"total_amount": "130000"}, "total_amount: Must be a JSON integer, not a string or a decimal"),
        ({"total_amount": 1300.5}, "total_amount: Must be a JSON integer, not a string or a decimal"),
        ({"total_amount": True}, "total_amount: Must be a JSON integer, not a string or a decimal"),
        ({"total_amount": -1}, "total_amount: Ensure this value is greater than or equal to 0"),
        ({"items": []}, "items: This list may not be empty"),
        ({"items": "rice"}, 'items: Expected a list of items but got type "str"'),
        (
            {"items": [{"name": "", "quantity": 1, "unit_price": 1, "total_price": 1}]},
            "items[0].name: This field may not be blank",
        ),
        (
            {"items": [{"name": "Rice", "quantity": 0, "unit_price": 1, "total_price": 1}]},
            "items[0].quantity: Ensure this value is greater than or equal to 1",
        ),
        (
            {"items": [{"name": "Rice", "quantity": 1, "unit_price": "1", "total_price": 1}]},
            "items[0].unit_price: Must be a JSON integer, not a string or a decimal",
        ),
        ({"items": [{"name": "Rice", "quantity": 1, "unit_price": 1}]}, "items[0].total_price: This field is required"),
        ({"currency": "naira"}, "currency: Ensure this field has no more than 3 characters"),
        ({"currency": "N1N"}, "currency: Must be a 3-letter ISO 4217 code such as NGN"),
        (
            {"transaction_date": "yesterday"},
            "transaction_date: Must be an ISO 8601 date and time, e.g. 2026-11-22T10:15:00Z",
        ),
        (
            {"transaction_date": "2026-13-45T10:00:00Z"},
            "transaction_date: Must be an ISO 8601 date and time, e.g. 2026-11-22T10:15:00Z",
        ),
        # The calendar's edges: outside the window, and not even a moment in every zone.
        (
            {"transaction_date": "0001-01-01T00:00:00+01:00"},
            "transaction_date: Must be between 2000-01-01T00:00:00Z and one day from now",
        ),
        (
            {"transaction_date": "9999-12-31T23:59:59-01:00"},
            "transaction_date: Must be between 2000-01-01T00:00:00Z and one day from now",
        ),
        (
            {"transaction_date": "9999-12-31T23:30Z"},
            "transaction_date: Must be between 2000-01-01T00:00:00Z and one day from now",
        ),
        (
            {"transaction_date": "1999-12-31T23:59:59Z"},
            "transaction_date: Must be between 2000-01-01T00:00:00Z and one day from now",
        ),
        ({"customer_email": "a@localhost"}, "customer_email: Not a valid email address at a public domain"),
        ({"customer_email": "a@[127.0.0.1]"}, "customer_email: Not a valid email address at a public domain"),
        ({"accent_color": "red"}, "accent_color: Must be a hex colour like #1a2b3c or #abc"),
        ({"accent_color": "#12345g"}, "accent_color: Must be a hex colour like #1a2b3c or #abc"),
        ({"merchant_logo": "javascript:alert(1)"}, "merchant_logo: Must be an http:// or https:// URL"),
        # urllib.parse cannot split these: stored, they made every page of the receipt a 500.
        ({"merchant_logo": "http://[::1"}, "merchant_logo: Must be a URL with a valid host name and port"),
        ({"merchant_logo": "https://a.example:99999"}, "merchant_logo: Must be a URL with a valid host name and port"),
        ({"merchant_logo": "https://:443/a.png"}, "merchant_logo: Must be a URL with a valid host name and port"),
        ({"token": "short"}, "token: Must be 8 to 64 letters, digits, '_' or '-'"),
        ({"short_code": "AB-12!"}, "short_code: Must be 6 letters or digits"),
        ({"short_code": "ſſſſſſ"}, "short_code: Must be 6 letters or digits"),
        ({"short_code": "ıııııı"}, "short_code: Must be 6 letters or digits"),
        ({"token": "rcpt_ſtored01_aaaaaa"}, "token: Must be 8 to 64 letters, digits, '_' or '-'"),
        ({"customer_email": "not-an-email"}, "customer_email: Not a valid email address at a public domain"),
        ({"customer_phone": "12"}, "customer_phone: Not a valid phone number"),
        ({"merchant_name": "x" * 201}, "merchant_name: Ensure this field has no more than 200 characters"),
        ({"category": 7}, "category: Must be a string"),
    ],
)
def test_it_names_the_invalid_field(api, sale, change, message):
    sale.update(change)
    status, body = api.post(PATH, sale)
    assert status == 400
    assert body == invalid(message)
    assert not Receipt.objects.exists()


def test_it_names_every_missing_field(api, db):
    status, body = api.post(PATH, {"currency": "NGN"})
    assert status == 400
    assert body == invalid(
        "merchant_string_id: This field is required; total_amount: This field is required; "
        "items: This field is required"
    )


def test_it_bounds_the_item_count(api, sale):
    sale["items"] = [{"name": "Gum", "quantity": 1, "unit_price": 100, "total_price": 100}] * 501
    status, body = api.post(PATH, sale)
    assert status == 400
    assert body == invalid("items: Ensure this field has no more than 500 elements")


def test_it_requires_a_json_object(api, db):
    status, body = api.post(PATH, [1, 2])
    assert status == 400
    assert body == invalid("Input must be a JSON object")


def test_it_requires_a_body(api, db):
    status, body = api.post(PATH)
    assert status == 400
    assert body == invalid("Input must be a JSON object")


def test_it_refuses_get(api, db):
    status, body = api.get(PATH, {"token": "x"})
    assert status == 405
    assert body == error_envelope(
        405, "METHOD_NOT_SUPPORTED", "createReceiptFromPOS is a mutation: call it with POST, not GET", PATH
    )


# Issue 19.10: the agent closed the connection on these; the service answers a clear 400.
def test_json_nested_too_deep_is_refused(api, db):
    status, body = api.post(PATH, raw_body="[" * 100_000 + "]" * 100_000)
    assert body == invalid("The request body is not valid JSON: depth limit exceeded: line 1 column 1026 (char 1025)")


def test_an_integer_of_5000_digits_is_refused(api, sale):
    raw = json.dumps(sale).replace('"total_amount": 130000', '"total_amount": ' + "9" * 5000)
    status, body = api.post(PATH, raw_body=raw)
    assert (status, body["error"]["data"]["code"]) == (400, "INVALID_INPUT")
    assert body["error"]["message"].startswith("The request body is not valid JSON: number is infinity")
    assert not Receipt.objects.exists()


# --- The customer's channel for the number (issue 35) ----------------------------------


def test_a_sale_whose_customer_chose_whatsapp_is_sent_there(api, sale, settings):
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"
    status, body = api.post(
        "createReceiptFromPOS", {**sale, "customer_phone": "+2348031234589", "customer_phone_channel": "whatsapp"}
    )
    assert status == 200
    assert body["result"]["data"]["deliveries"] == [
        {"channel": "whatsapp", "destination": "+234*******89", "status": "queued"}
    ]


def test_a_sale_asking_for_whatsapp_where_it_is_not_offered_is_stored_and_texted(api, sale):
    status, body = api.post(
        "createReceiptFromPOS", {**sale, "customer_phone": "+2348031234589", "customer_phone_channel": "whatsapp"}
    )
    assert status == 200
    assert body["result"]["data"]["deliveries"] == [
        {"channel": "sms", "destination": "+234*******89", "status": "queued"}
    ]


def test_an_unknown_customer_phone_channel_is_refused(api, sale):
    status, body = api.post("createReceiptFromPOS", {**sale, "customer_phone_channel": "telegram"})
    assert status == 400
    assert body["error"]["message"] == 'customer_phone_channel: Must be "sms" or "whatsapp"'
