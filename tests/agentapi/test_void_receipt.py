"""voidReceipt: a sale with no refunds is cancelled, once."""

import pytest

from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

PATH = "voidReceipt"


def test_it_voids_a_sale_and_says_so_again(api, stored, live_key):
    status, body = api.post(PATH, {"token": stored.token, "reason": "Rung up twice"}, **bearer(live_key))
    assert status == 200, body
    data = body["result"]["data"]
    assert (data["id"], data["token"], data["short_code"], data["status"]) == (
        stored.pk,
        stored.token,
        "STORE1",
        "voided",
    )
    assert data["voided_at"].endswith("Z")
    assert api.post(PATH, {"token": stored.token}, **bearer(live_key)) == (200, body)
    _, read = api.get("getReceipt", {"token": stored.token})
    assert read["result"]["data"]["status"] == "voided"
    stored.refresh_from_db()
    assert stored.void.reason == "Rung up twice"


def test_a_sale_with_refunds_is_not_voided(api, stored, live_key):
    api.post("refundReceipt", {"token": stored.token, "amount": 100}, **bearer(live_key))
    status, body = api.post(PATH, {"token": stored.token}, **bearer(live_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "Only a receipt with no refunds can be voided", PATH)


def test_a_refund_is_not_voided(api, stored, live_key):
    _, refund = api.post("refundReceipt", {"token": stored.token, "amount": 100}, **bearer(live_key))
    status, body = api.post(PATH, {"token": refund["result"]["data"]["token"]}, **bearer(live_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", "A refund cannot be voided", PATH)


def test_it_needs_the_merchants_key(api, stored):
    status, body = api.post(PATH, {"token": stored.token})
    assert status == 401
    assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", PATH)


def test_a_test_key_reaches_only_test_receipts(api, stored, test_key):
    status, body = api.post(PATH, {"token": stored.token}, **bearer(test_key))
    assert status == 403
    assert body == error_envelope(403, "FORBIDDEN", "A test key cannot access live receipts: use a live key", PATH)


def test_it_is_a_mutation(api, stored):
    status, body = api.get(PATH, {"token": stored.token})
    assert status == 405
