"""A customer holds an offline sale's token (the QR code) and short code (the slip) before
the agent uploads it: nobody else can take either first (receipts.claims).

Each test replays an attack of the hostile reviews: another merchant (with a key of its
own, a test key will do) or someone without a key claims the genuine sale's token or
printed short code, then the genuine upload comes with the merchant's key.
"""

import logging

import pytest

from merchants.keys import issue_key
from merchants.models import ApiKey, Merchant
from receipts.codes import derived_short_code
from receipts.models import Receipt, SetAside
from tests.helpers import bearer, error_envelope, signed_token

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"
ANOTHER_MERCHANTS = "Token was issued for another merchant"
MAC_MISMATCH = "token: Its signature does not match the API key it names"
ITEM = [{"name": "x", "quantity": 1, "unit_price": 1, "total_price": 1}]


@pytest.fixture
def till_token(live_key):
    """The token the merchant's agent printed as a QR code, signed with its live key."""
    return signed_token(live_key)


@pytest.fixture
def genuine(sale, till_token):
    """The sale the till printed: its QR code holds the token, its slip the derived code."""
    return {**sale, "token": till_token, "short_code": derived_short_code(till_token), "transaction_date": None}


@pytest.fixture
def forgery(genuine):
    return {
        **genuine,
        "total_amount": 1,
        "items": [{"name": "Refund owed: call 0800 000 0000", "quantity": 1, "unit_price": 1, "total_price": 1}],
    }


@pytest.fixture
def rival(other_merchant):
    """Another merchant's own test key: any key of its own will do for the attack."""
    return issue_key(other_merchant, "test", "Rival's laptop")


def _read(api, reference):
    status, body = api.get("getReceipt", {"token": reference})
    assert status == 200, body
    return body["result"]["data"]


def _tampered(token: str) -> str:
    return token[:-1] + ("a" if token[-1] != "a" else "b")


def test_another_merchant_cannot_claim_a_token_the_till_printed(api, merchant, live_key, rival, genuine, forgery):
    status, body = api.post(PATH, {**forgery, "merchant_string_id": "corner-shop"}, **bearer(rival))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", ANOTHER_MERCHANTS, PATH)
    assert not Receipt.objects.exists()

    status, body = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200, body
    data = body["result"]["data"]
    assert (data["token"], data["short_code"]) == (genuine["token"], genuine["short_code"])
    for reference in (genuine["token"], genuine["short_code"]):
        assert _read(api, reference)["merchant_id"] == merchant.pk


def test_nor_without_a_key_under_a_test_merchant(api, merchant, live_key, genuine, forgery):
    status, body = api.post(PATH, {**forgery, "merchant_string_id": "test-evil"})
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", ANOTHER_MERCHANTS, PATH)
    assert api.post(PATH, genuine, **bearer(live_key))[0] == 200
    assert not Merchant.objects.filter(string_id="test-evil").exists()


def test_another_merchant_cannot_take_it_as_a_refund_token(api, live_key, rival, sale, genuine):
    theirs = {**sale, "token": None, "short_code": None, "merchant_string_id": "corner-shop"}
    sold = api.post(PATH, theirs, **bearer(rival))[1]["result"]["data"]
    status, body = api.post(
        "refundReceipt", {"token": sold["token"], "amount": 1, "refund_token": genuine["token"]}, **bearer(rival)
    )
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", ANOTHER_MERCHANTS, "refundReceipt")
    assert api.post(PATH, genuine, **bearer(live_key))[0] == 200


def test_a_printed_short_code_under_another_token_is_never_given_away(api, merchant, live_key, rival, genuine):
    # The slip shows the short code too: a claim of it under another token gets a code of its own.
    squat = {**genuine, "token": "rcpt_squatter_000001", "merchant_string_id": "corner-shop"}
    status, body = api.post(PATH, squat, **bearer(rival))
    assert status == 200
    assert body["result"]["data"]["short_code"] != genuine["short_code"]
    status, body = api.post(PATH, genuine, **bearer(live_key))
    assert body["result"]["data"]["short_code"] == genuine["short_code"]
    assert _read(api, genuine["short_code"])["token"] == genuine["token"]


def test_a_token_whose_mac_does_not_match_is_refused(api, live_key, genuine):
    status, body = api.post(PATH, {**genuine, "token": _tampered(genuine["token"])}, **bearer(live_key))
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", MAC_MISMATCH, PATH)
    assert not Receipt.objects.exists()


def test_a_token_made_with_an_older_key_of_the_merchant_is_its_own(api, merchant, live_key, genuine):
    # Printed offline with a key rotated since: the upload comes with the new key.
    newer = issue_key(merchant, "live", "Till 1, rotated")
    status, body = api.post(PATH, genuine, **bearer(newer))
    assert status == 200, body
    assert body["result"]["data"]["token"] == genuine["token"]


def test_a_key_made_before_token_secrets_learns_it_at_its_first_call(api, live_key, genuine):
    ApiKey.objects.filter(pk=live_key.api_key.pk).update(token_secret="")
    assert api.get("getReceipt", {"token": "ZZZZZZ"}, **bearer(live_key))[0] == 404  # any call
    live_key.api_key.refresh_from_db()
    assert live_key.api_key.token_secret
    assert api.post(PATH, {**genuine, "token": _tampered(genuine["token"])}, **bearer(live_key))[0] == 400


def test_a_keyless_sale_of_another_merchant_is_never_set_aside(api, merchant, sale, rival):
    # The merchant does not require its key: its POS sold without one. Another merchant's
    # key with the same token, or with its short code and an old date, changes nothing.
    mine = api.post(PATH, sale)[1]["result"]["data"]
    by_token = {**sale, "merchant_string_id": "corner-shop", "total_amount": 1, "items": ITEM}
    status, body = api.post(PATH, by_token, **bearer(rival))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    by_code = {**by_token, "token": "rcpt_rival_0000001", "transaction_date": "2020-01-01T00:00:00Z"}
    status, body = api.post(PATH, by_code, **bearer(rival))
    assert status == 200
    assert body["result"]["data"]["short_code"] != mine["short_code"]
    for reference in (mine["token"], mine["short_code"]):
        assert _read(api, reference)["id"] == mine["id"]
    assert not SetAside.objects.exists()


def test_a_keyless_forgery_for_the_same_merchant_is_set_aside(api, merchant, live_key, genuine, forgery):
    # The owner switched "require API key" off, and someone copied the QR code before the
    # agent came back online; the agent's upload, with its key, takes its sale back.
    assert api.post(PATH, forgery)[0] == 200
    status, body = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200, body
    assert _read(api, genuine["token"])["total_amount"] == 130000
    assert _read(api, genuine["short_code"])["token"] == genuine["token"]
    record = SetAside.objects.get(claimed_token=genuine["token"])
    assert (record.receipt.merchant, record.receipt.total_amount) == (merchant, 1)
    assert record.receipt.token != genuine["token"]


def test_a_forgery_for_a_merchant_that_requires_its_key_is_refused(api, merchant, forgery):
    merchant.require_api_key = True
    merchant.save()
    status, body = api.post(PATH, forgery)
    assert status == 401
    assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", PATH)
    assert not Receipt.objects.exists()


def test_a_keyed_sale_never_displaces_another_keyed_sale(api, merchant, live_key, other_live_key, sale):
    assert api.post(PATH, sale, **bearer(live_key))[0] == 200
    other = {**sale, "merchant_string_id": "corner-shop", "total_amount": 1, "items": ITEM}
    status, body = api.post(PATH, other, **bearer(other_live_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    assert _read(api, sale["token"])["merchant_id"] == merchant.pk


def test_the_same_sale_sent_first_without_then_with_the_key_is_one_receipt(api, merchant, live_key, genuine):
    _, first = api.post(PATH, genuine)
    status, again = api.post(PATH, genuine, **bearer(live_key))
    assert status == 200
    assert again["result"]["data"]["id"] == first["result"]["data"]["id"]
    assert Receipt.objects.get().keyed is True
    assert not SetAside.objects.exists()


def test_setting_aside_is_logged_without_personal_data(api, merchant, live_key, genuine, forgery, caplog):
    api.post(PATH, {**forgery, "customer_email": "victim@example.com"})
    with caplog.at_level(logging.WARNING, logger="receipts.writer"):
        api.post(PATH, genuine, **bearer(live_key))
    (record,) = [r for r in caplog.records if r.name == "receipts.writer"]
    assert "set aside" in record.getMessage()
    assert "victim" not in record.getMessage()
    assert genuine["token"] not in record.getMessage()


def test_a_code_of_the_derived_kind_is_taken_only_as_its_tokens_own(api, sale):
    status, body = api.post(PATH, {**sale, "merchant_string_id": "test-codes", "short_code": "2ABCDE"})
    assert status == 200
    assert body["result"]["data"]["short_code"] != "2ABCDE"
    own = derived_short_code("rcpt_derived_000001")
    status, body = api.post(
        PATH, {**sale, "merchant_string_id": "test-codes", "token": "rcpt_derived_000001", "short_code": own}
    )
    assert body["result"]["data"]["short_code"] == own


def test_taken_short_codes_cannot_be_enumerated_through_sales(api, merchant, rival, receipt_factory, settings):
    # Each requested code found taken tells the caller it exists: it spends the address's
    # failed-look-up budget, and once that is spent no requested code is tried at all.
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "3/h"
    receipt_factory(token="rcpt_existing_000001", short_code="TAKEN1")
    probe = {"merchant_string_id": "corner-shop", "total_amount": 1, "items": ITEM}
    answers = [api.post(PATH, {**probe, "short_code": "TAKEN1"}, **bearer(rival)) for _ in range(3)]
    assert [status for status, _ in answers] == [200, 200, 200]
    assert all(body["result"]["data"]["short_code"] != "TAKEN1" for _, body in answers)
    status, body = api.post(PATH, {**probe, "short_code": "FREE01"}, **bearer(rival))
    assert status == 200
    assert body["result"]["data"]["short_code"] != "FREE01"  # free, yet not told apart from taken
    status, body = api.get("getReceipt", {"token": "TAKEN1"}, **bearer(rival))
    assert status == 429
