"""refundReceipt: a refund is a receipt of its own, for what remains, an amount, or items."""

import pytest

from receipts.models import Receipt
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

PATH = "refundReceipt"


@pytest.fixture
def registered(merchant):
    merchant.require_api_key = True
    merchant.save()
    return merchant


def _refund(api, key, **body):
    return api.post(PATH, body, **bearer(key))


def _read(api, token, key):
    return api.get("getReceipt", {"token": token}, **bearer(key))[1]["result"]["data"]


def test_it_refunds_everything_that_remains(api, stored, live_key):
    status, body = _refund(api, live_key, token=stored.token)
    assert status == 200, body
    data = body["result"]["data"]
    assert data["amount"] == 130000
    refund = Receipt.objects.get(token=data["token"])
    assert (refund.short_code, refund.receipt_type, refund.refund_of_id) == (data["short_code"], "refund", stored.pk)
    assert data["receipt_url"] == refund.public_url
    sale = _read(api, stored.token, live_key)
    assert sale["status"] == "refunded"
    assert sale["refunds"] == [
        {
            "token": refund.token,
            "short_code": refund.short_code,
            "amount": 130000,
            "created_at": sale["refunds"][0]["created_at"],
        }
    ]
    read = _read(api, refund.token, live_key)
    assert (read["receipt_type"], read["refund_of"], read["total_amount"]) == ("refund", stored.token, 130000)
    assert read["items"] == [
        {"name": "Refund of receipt STORE1", "quantity": 1, "unit_price": 130000, "total_price": 130000}
    ]


def test_an_amount_then_the_rest(api, stored, live_key):
    assert _refund(api, live_key, token=stored.token, amount=30000)[1]["result"]["data"]["amount"] == 30000
    assert _read(api, stored.token, live_key)["status"] == "partially_refunded"
    assert _refund(api, live_key, token=stored.token)[1]["result"]["data"]["amount"] == 100000
    assert _read(api, stored.token, live_key)["status"] == "refunded"


def test_listed_items_are_refunded_at_their_share(api, merchant, live_key, receipt_factory):
    # 130,000 of items, a 10,000 discount and 7.5 % VAT on the rest, and a tip that is not refunded.
    sale = receipt_factory(
        subtotal_amount=130000,
        discount_amount=10000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False}],
        tip_amount=5000,
        total_amount=134000,
    )
    status, body = _refund(api, live_key, token=sale.token, items=[{"index": 1, "quantity": 1}], reason="Warm drink")
    assert status == 200, body
    # Chapman: 30,000 of 130,000 of items, of the 129,000 paid for items.
    assert body["result"]["data"]["amount"] == 29769
    refund = _read(api, body["result"]["data"]["token"], live_key)
    assert refund["items"] == [{"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000}]


def test_refunding_items_one_by_one_adds_up_to_what_was_paid(api, merchant, live_key, receipt_factory):
    # Two items at 1 with a total of 3 (a tax added on top): each refund's share rounds, yet
    # the second item is not refused and the two refunds give back the 3 that was paid.
    items = [{"name": "Sweet", "quantity": 1, "unit_price": 1, "total_price": 1}] * 2
    sale = receipt_factory(items=items, total_amount=3)
    first = _refund(api, live_key, token=sale.token, items=[{"index": 0, "quantity": 1}])
    second = _refund(api, live_key, token=sale.token, items=[{"index": 1, "quantity": 1}])
    assert (first[0], second[0]) == (200, 200), second
    assert [first[1]["result"]["data"]["amount"], second[1]["result"]["data"]["amount"]] == [2, 1]
    assert _read(api, sale.token, live_key)["status"] == "refunded"


def test_refunding_every_item_refunds_the_sale(api, merchant, live_key, receipt_factory):
    # Three items at 3,333 with a total of 10,750: refunded one by one, nothing is left over.
    items = [{"name": f"Item {n}", "quantity": 1, "unit_price": 3333, "total_price": 3333} for n in range(3)]
    sale = receipt_factory(items=items, total_amount=10750)
    amounts = [
        _refund(api, live_key, token=sale.token, items=[{"index": n, "quantity": 1}])[1]["result"]["data"]["amount"]
        for n in range(3)
    ]
    assert amounts == [3583, 3584, 3583]
    data = _read(api, sale.token, live_key)
    assert data["status"] == "refunded"
    assert sum(entry["amount"] for entry in data["refunds"]) == 10750


def test_refunding_every_item_gives_back_the_tip_too(api, merchant, live_key, receipt_factory):
    sale = receipt_factory(subtotal_amount=130000, tip_amount=5000, total_amount=135000)
    first = _refund(api, live_key, token=sale.token, items=[{"index": 1, "quantity": 1}])
    assert first[1]["result"]["data"]["amount"] == 30000  # an item's share: the tip is not an item
    rest = _refund(api, live_key, token=sale.token, items=[{"index": 0, "quantity": 2}])
    assert rest[1]["result"]["data"]["amount"] == 105000
    assert _read(api, sale.token, live_key)["status"] == "refunded"


def test_a_sale_has_a_bounded_number_of_refunds(api, sale, settings):
    # Anyone may refund a test- merchant's receipt: without a bound, thousands of one-unit
    # refunds made its getReceipt answer hundreds of kilobytes.
    from receipts.refunds import MAX_REFUNDS

    status, body = api.post("createReceiptFromPOS", {**sale, "merchant_string_id": "test-tiny-refunds"})
    token = body["result"]["data"]["token"]
    for _ in range(MAX_REFUNDS):
        assert api.post(PATH, {"token": token, "amount": 1})[0] == 200
    status, body = api.post(PATH, {"token": token, "amount": 1})
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", f"A receipt can be refunded at most {MAX_REFUNDS} times", PATH)
    assert Receipt.objects.filter(refund_of__token=token).count() == MAX_REFUNDS


def test_an_item_is_not_refunded_more_often_than_it_was_sold(api, stored, live_key):
    assert _refund(api, live_key, token=stored.token, items=[{"index": 0, "quantity": 1}])[0] == 200
    assert _refund(api, live_key, token=stored.token, items=[{"index": 0, "quantity": 1}])[0] == 200
    status, body = _refund(api, live_key, token=stored.token, items=[{"index": 0, "quantity": 1}])
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Refund exceeds the amount remaining", PATH)


def test_more_than_remains_is_refused(api, stored, live_key):
    _refund(api, live_key, token=stored.token, amount=100000)
    status, body = _refund(api, live_key, token=stored.token, amount=30001)
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Refund exceeds the amount remaining", PATH)
    status, body = _refund(api, live_key, token=stored.token, amount=30000)
    assert status == 200
    status, body = _refund(api, live_key, token=stored.token)  # nothing remains
    assert status == 409


def test_the_refund_token_is_the_idempotency_key(api, stored, live_key):
    first = _refund(api, live_key, token=stored.token, amount=1000, refund_token="rfnd_till1_000001")
    again = _refund(api, live_key, token=stored.token, amount=1000, refund_token="rfnd_till1_000001")
    assert first == again
    assert first[1]["result"]["data"]["token"] == "rfnd_till1_000001"
    assert Receipt.objects.filter(refund_of=stored).count() == 1
    status, body = _refund(api, live_key, token=stored.token, amount=2000, refund_token="rfnd_till1_000001")
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)


def test_a_voided_sale_is_not_refunded(api, stored, live_key):
    api.post("voidReceipt", {"token": stored.token}, **bearer(live_key))
    status, body = _refund(api, live_key, token=stored.token)
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "A voided receipt cannot be refunded", PATH)


def test_a_refund_is_not_refunded(api, stored, live_key):
    refund_token = _refund(api, live_key, token=stored.token, amount=10)[1]["result"]["data"]["token"]
    status, body = _refund(api, live_key, token=refund_token)
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "A refund cannot be refunded", PATH)


def test_it_needs_the_merchants_key(api, stored, registered, other_live_key):
    status, body = api.post(PATH, {"token": stored.token})
    assert status == 401
    assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", PATH)
    status, body = api.post(PATH, {"token": stored.token}, **bearer(other_live_key))
    assert status == 404  # another merchant's receipt is not found to its key
    assert not Receipt.objects.filter(refund_of__isnull=False).exists()


def test_even_a_merchant_that_lets_its_pos_sell_without_a_key_needs_it_to_refund(api, stored):
    status, body = api.post(PATH, {"token": stored.token})
    assert status == 401


def test_a_test_merchants_receipts_are_refunded_without_a_key(api, sale):
    api.post("createReceiptFromPOS", {**sale, "merchant_string_id": "test-stall"})
    status, body = api.post(PATH, {"token": sale["token"], "amount": 500})
    assert status == 200, body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "token: This field is required"),
        ({"token": "STORE1", "amount": 0}, "amount: Ensure this value is greater than or equal to 1"),
        ({"token": "STORE1", "amount": "5"}, "amount: Must be a JSON integer, not a string or a decimal"),
        (
            {"token": "STORE1", "amount": 5, "items": [{"index": 0, "quantity": 1}]},
            "Give an amount or items to refund, not both",
        ),
        ({"token": "STORE1", "items": []}, "items: This list may not be empty"),
        ({"token": "STORE1", "items": [{"index": 0}]}, "items[0].quantity: This field is required"),
        (
            {"token": "STORE1", "items": [{"index": 5, "quantity": 1}]},
            "items: The sale has 2 items; there is no item 5",
        ),
        ({"token": "STORE1", "refund_token": "bad token"}, "refund_token: Must be 8 to 64 letters, digits, '_' or '-'"),
        ({"token": "STORE1", "reason": "x" * 201}, "reason: Ensure this field has no more than 200 characters"),
    ],
)
def test_it_names_the_invalid_field(api, stored, live_key, body, message):
    status, answer = api.post(PATH, body, **bearer(live_key))
    assert status == 400
    assert answer == error_envelope(400, "INVALID_INPUT", message, PATH)


def test_the_customer_of_the_sale_gets_the_refund_receipt(api, receipt_factory, live_key, mailoutbox,
                                                          django_capture_on_commit_callbacks):  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        sale = receipt_factory(customer_email="ada@example.com")
    mailoutbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        status, body = _refund(api, live_key, token=sale.token, amount=5000)
    assert status == 200
    (message,) = mailoutbox
    assert message.to == ["ada@example.com"]
    assert f"/app/receipt/{body['result']['data']['short_code']}\n" in message.body


def test_refunds_through_a_batch(api, stored, live_key):
    import json

    response = api.client.post(
        "/api/trpc/refundReceipt,refundReceipt?batch=1",
        json.dumps({"0": {"token": stored.token, "amount": 100}, "1": {"token": stored.token, "amount": 200}}),
        content_type="application/json",
        headers=bearer(live_key),
    )
    assert response.status_code == 200
    assert [call["result"]["data"]["amount"] for call in response.json()] == [100, 200]
    assert _read(api, stored.token, live_key)["status"] == "partially_refunded"


def test_a_null_item_is_refused(api, stored, live_key):
    # Found by fuzzing (tests/agentapi/test_openapi_fuzz.py): it was a 500.
    status, body = _refund(api, live_key, token=stored.token, items=[None])
    assert (status, body) == (400, error_envelope(400, "INVALID_INPUT", "items[0]: This field may not be null", PATH))
