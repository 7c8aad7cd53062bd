"""A customer holds an offline sale's token (the QR code) before the agent uploads it:
nobody without the merchant's key can take that token or its short code first.

Each test replays the attack of the hostile review: an anonymous createReceiptFromPOS
with the genuine sale's token (and printed short code), then the genuine upload with
the merchant's key.
"""

import logging

import pytest

from merchants.models import Merchant
from receipts.models import Receipt, SetAside
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"
TOKEN = "rcpt_mwrjzn0u_4hisgg"
CODE = "DQ987B"


@pytest.fixture
def genuine(sale):
    """The sale the till printed (its QR code holds TOKEN, its slip says CODE)."""
    return {**sale, "token": TOKEN, "short_code": CODE, "transaction_date": None}


@pytest.fixture
def forgery(genuine):
    return {
        **genuine,
        "total_amount": 1,
        "items": [{"name": "Refund owed: call 0800 000 0000", "quantity": 1, "unit_price": 1, "total_price": 1}],
    }


def _read(api, reference):
    status, body = api.get("getReceipt", {"token": reference})
    assert status == 200, body
    return body["result"]["data"]


def test_a_forgery_under_a_test_merchant_is_set_aside_by_the_keyed_upload(api, merchant, live_key, genuine, forgery):
    merchant.require_api_key = True
    merchant.save()
    status, _ = api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    assert status == 200  # an unkeyed claim is accepted: until the genuine sale comes

    status, body = api.post(PATH, genuine, **bearer(live_key))

    assert status == 200, body
    assert (body["result"]["data"]["token"], body["result"]["data"]["short_code"]) == (TOKEN, CODE)
    for reference in (TOKEN, CODE):
        shown = _read(api, reference)
        assert (shown["merchant_id"], shown["total_amount"]) == (merchant.pk, 130000)
    record = SetAside.objects.get(claimed_token=TOKEN)
    assert (record.claimed_short_code, record.receipt.total_amount) == (CODE, 1)
    assert record.receipt.token != TOKEN
    assert record.receipt.short_code != CODE
    assert record.created_at is not None


def test_a_forgery_for_the_same_keyless_merchant_is_set_aside_too(api, merchant, live_key, genuine, forgery):
    # The owner switched "require API key" off, yet their own POS sends its key.
    assert api.post(PATH, forgery)[0] == 200
    status, body = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200, body
    assert _read(api, TOKEN)["total_amount"] == 130000
    assert SetAside.objects.get(claimed_token=TOKEN).receipt.merchant == merchant


def test_a_forgery_for_a_merchant_that_requires_its_key_is_refused(api, merchant, genuine, forgery):
    merchant.require_api_key = True
    merchant.save()
    status, body = api.post(PATH, forgery)
    assert status == 401
    assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", PATH)
    assert not Receipt.objects.exists()


def test_the_forger_cannot_take_the_token_back(api, merchant, live_key, genuine, forgery):
    api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    api.post(PATH, genuine, **bearer(live_key))
    status, body = api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    assert _read(api, TOKEN)["total_amount"] == 130000


def test_a_forgery_after_the_keyed_upload_changes_nothing(api, merchant, live_key, genuine, forgery):
    assert api.post(PATH, genuine, **bearer(live_key))[0] == 200
    status, _ = api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    assert status == 409
    assert _read(api, TOKEN)["total_amount"] == 130000
    assert _read(api, CODE)["token"] == TOKEN


def test_a_squatted_short_code_alone_is_taken_back(api, merchant, live_key, genuine, forgery):
    # The slip shows the short code too: a forgery under another token must not answer it.
    api.post(PATH, {**forgery, "token": "rcpt_squatter_000001", "merchant_string_id": "test-evil"})
    status, body = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200
    assert body["result"]["data"]["short_code"] == CODE
    assert _read(api, CODE)["token"] == TOKEN
    assert SetAside.objects.get(claimed_short_code=CODE).claimed_token == "rcpt_squatter_000001"


def test_a_short_code_held_since_before_the_sale_is_a_chance_collision(api, merchant, live_key, genuine):
    # A receipt made long before the sale cannot be a claim on its slip: it keeps its code,
    # and the sale gets a fresh one, as for any collision.
    older = api.post(PATH, {**genuine, "token": "rcpt_oldersale_00001", "transaction_date": None})
    assert older[0] == 200
    Receipt.objects.filter(token="rcpt_oldersale_00001").update(created_at="2026-01-01T00:00:00Z")
    status, body = api.post(PATH, {**genuine, "transaction_date": "2026-11-22T10:15:00Z"}, **bearer(live_key))
    assert status == 200
    assert body["result"]["data"]["short_code"] != CODE
    assert _read(api, CODE)["token"] == "rcpt_oldersale_00001"


def test_a_keyed_sale_never_displaces_another_keyed_sale(api, merchant, live_key, other_live_key, genuine):
    assert api.post(PATH, genuine, **bearer(live_key))[0] == 200
    other = {**genuine, "merchant_string_id": "corner-shop", "total_amount": 5}
    status, body = api.post(PATH, other, **bearer(other_live_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    assert _read(api, TOKEN)["merchant_id"] == merchant.pk


def test_the_same_sale_sent_first_without_then_with_the_key_is_one_receipt(api, merchant, live_key, genuine):
    _, first = api.post(PATH, genuine)
    status, again = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200
    assert again["result"]["data"]["id"] == first["result"]["data"]["id"]
    assert Receipt.objects.get().keyed is True
    assert not SetAside.objects.exists()


def test_setting_aside_is_logged_without_personal_data(api, merchant, live_key, genuine, forgery, caplog):
    api.post(PATH, {**forgery, "merchant_string_id": "test-evil", "customer_email": "victim@example.com"})
    with caplog.at_level(logging.WARNING, logger="receipts.writer"):
        api.post(PATH, genuine, **bearer(live_key))
    (record,) = [r for r in caplog.records if r.name == "receipts.writer"]
    assert "set aside" in record.getMessage()
    assert "victim" not in record.getMessage()
    assert TOKEN not in record.getMessage()


def test_the_genuine_sale_is_kept_with_its_contact_sent(
    api, merchant, live_key, genuine, forgery, mailoutbox, django_capture_on_commit_callbacks
):
    api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    with django_capture_on_commit_callbacks(execute=True):
        status, body = api.post(PATH, {**genuine, "customer_email": "ada@example.com"}, **bearer(live_key))
    assert status == 200
    assert body["result"]["data"]["deliveries"] == [
        {"channel": "email", "destination": "a*******@example.com", "status": "queued"}
    ]
    assert [message.to for message in mailoutbox] == [["ada@example.com"]]


def test_an_unknown_test_merchant_from_a_set_aside_claim_keeps_existing(api, live_key, genuine, forgery):
    api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    api.post(PATH, genuine, **bearer(live_key))
    assert Merchant.objects.filter(string_id="test-evil").exists()  # its set-aside receipt still belongs to it
