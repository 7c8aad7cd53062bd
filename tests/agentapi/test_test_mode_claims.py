"""Test mode is a world apart: nothing made in test mode (a test key, a ``test-`` merchant)
stops a live sale from landing under its own token and short code, or changes what a live
link opens (receipts.creation).

Each test replays the third hostile review's attack or one of its variants: a POS that makes
its own plain token (the public SDKs, the agent without a key) prints the QR code and the
short code before the sale reaches the service; anyone who sees the slip sends a sale with
them for a ``test-`` merchant, anonymously; then the shop's own sale arrives.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from merchants.models import Merchant
from receipts.codes import derived_short_code
from receipts.models import Receipt, SetAside
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"
CONFLICT = "Token already used for a different receipt"
FORGED_ITEMS = [{"name": "Refund owed: call 0800 000 0000", "quantity": 1, "unit_price": 1, "total_price": 1}]


@pytest.fixture
def forgery(sale):
    """The shop's printed token and short code, sent first for a test merchant, anonymously."""
    return {
        **sale,
        "merchant_string_id": "test-anything",
        "merchant_name": "Mama Put Kitchen (Official)",
        "total_amount": 1,
        "items": FORGED_ITEMS,
    }


def _read(api, reference, **headers):
    status, body = api.get("getReceipt", {"token": reference}, **headers)
    assert status == 200, body
    return body["result"]["data"]


def _lands(api, sale, merchant, **headers):
    """The shop's sale is stored under its own token and code, and both open it (with its key too)."""
    status, body = api.post(PATH, sale, **headers)
    assert status == 200, body
    data = body["result"]["data"]
    assert (data["token"], data["short_code"]) == (sale["token"], sale["short_code"])
    for reference in (sale["token"], sale["short_code"]):
        found = _read(api, reference, **headers)
        assert (found["id"], found["merchant_id"], found["total_amount"]) == (data["id"], merchant.pk, 130000)
    return Receipt.objects.get(pk=data["id"])


def _set_aside(forgery_token: str) -> Receipt:
    """The test receipt that held the shop's token, now under a fresh one nobody was given."""
    record = SetAside.objects.get(claimed_token=forgery_token)
    assert record.receipt.livemode is False
    assert record.receipt.token != forgery_token
    return record.receipt


def test_the_shops_keyed_sale_takes_its_token_back_from_a_test_merchant(api, merchant, live_key, sale, forgery):
    status, body = api.post(PATH, forgery)
    assert status == 200, body
    _lands(api, sale, merchant, **bearer(live_key))
    forged = _set_aside(sale["token"])
    assert forged.merchant.string_id == "test-anything"
    assert _read(api, forged.token)["merchant_name"] == "Mama Put Kitchen (Official)"  # still readable, apart


def test_the_shops_sale_without_a_key_takes_it_back_too(api, merchant, sale, forgery):
    assert api.post(PATH, forgery)[0] == 200
    _lands(api, sale, merchant)
    _set_aside(sale["token"])


def test_the_agents_printed_token_and_derived_code_are_taken_back(api, merchant, sale, forgery):
    # The agent without a key prints a plain token and the code derived from it.
    token = "rcpt_mwrjzn0u_4hisgg"
    printed = {"token": token, "short_code": derived_short_code(token)}
    assert api.post(PATH, {**forgery, **printed})[1]["result"]["data"]["short_code"] == printed["short_code"]
    _lands(api, {**sale, **printed}, merchant)


def test_a_printed_short_code_held_by_a_test_receipt_is_taken_back(api, merchant, live_key, sale, forgery):
    # The forgery asks for the printed code under a token of its own.
    status, body = api.post(PATH, {**forgery, "token": "rcpt_forgery_000001"})
    assert body["result"]["data"]["short_code"] == sale["short_code"]
    _lands(api, sale, merchant, **bearer(live_key))
    record = SetAside.objects.get(claimed_token="rcpt_forgery_000001")
    assert record.claimed_short_code == sale["short_code"]
    assert (record.receipt.livemode, record.receipt.merchant.string_id) == (False, "test-anything")
    assert record.receipt.short_code != sale["short_code"]


def test_a_test_receipt_made_long_before_still_gives_the_code_up(api, merchant, sale, forgery):
    old = {**forgery, "token": "rcpt_forgery_000001", "transaction_date": "2020-01-01T00:00:00Z"}
    assert api.post(PATH, old)[0] == 200
    _lands(api, {**sale, "transaction_date": "2026-11-22T10:15:00.000Z"}, merchant)


def test_the_shops_own_test_receipt_never_answers_its_live_sale(api, merchant, test_key, live_key, sale):
    # The same sale sent first with the shop's test key, then with its live key: the live
    # sale is a receipt of its own, live, not the test receipt replayed.
    status, body = api.post(PATH, sale, **bearer(test_key))
    test_id = body["result"]["data"]["id"]
    live = _lands(api, sale, merchant, **bearer(live_key))
    assert live.livemode is True
    assert live.pk != test_id
    assert Receipt.objects.get(pk=test_id).token != sale["token"]


def test_a_test_key_never_sets_a_live_receipt_aside(api, merchant, test_key, sale):
    # The shop sells without its key (it does not require it); its own test key, with the
    # token of that live sale, must not take it over.
    live = api.post(PATH, sale)[1]["result"]["data"]
    status, body = api.post(PATH, {**sale, "total_amount": 1, "items": FORGED_ITEMS}, **bearer(test_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", CONFLICT, PATH)
    for reference in (sale["token"], sale["short_code"]):
        assert _read(api, reference)["id"] == live["id"]
    assert not SetAside.objects.exists()


def test_a_test_sale_never_takes_a_live_receipts_token_or_code(api, merchant, sale, forgery):
    live = api.post(PATH, sale)[1]["result"]["data"]
    status, body = api.post(PATH, forgery)
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", CONFLICT, PATH)
    status, body = api.post(PATH, {**forgery, "token": "rcpt_forgery_000001"})
    assert status == 200
    assert body["result"]["data"]["short_code"] != sale["short_code"]
    for reference in (sale["token"], sale["short_code"]):
        assert _read(api, reference)["id"] == live["id"]
    assert not Merchant.objects.filter(string_id="test-anything", receipts__token=sale["token"]).exists()


def test_across_live_merchants_a_taken_token_is_still_a_conflict(api, merchant, other_live_key, sale):
    live = api.post(PATH, sale)[1]["result"]["data"]
    theirs = {**sale, "merchant_string_id": "corner-shop", "total_amount": 1, "items": FORGED_ITEMS}
    status, body = api.post(PATH, theirs, **bearer(other_live_key))
    assert status == 409
    assert body == error_envelope(409, "CONFLICT", CONFLICT, PATH)
    assert _read(api, sale["token"])["id"] == live["id"]


class _Tills:
    """Eight threads that post sales together, released at once, round after round: the
    same threads each round, as a server's are (each keeps its Redis connection for good)."""

    SIZE = 8

    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=self.SIZE)

    def post_at_once(self, bodies: list[tuple[dict, dict]]) -> list[tuple[int, dict]]:
        """Post each (body, headers) from a thread of its own, all released together."""
        barrier = threading.Barrier(len(bodies))

        def post(body, headers):
            barrier.wait(timeout=10)
            try:
                response = Client().post(
                    f"/api/trpc/{PATH}", json.dumps(body), content_type="application/json", headers=headers
                )
                return response.status_code, json.loads(response.content)
            finally:
                connection.close()

        return [future.result(timeout=60) for future in [self.pool.submit(post, *pair) for pair in bodies]]

    def close(self) -> None:
        self.pool.shutdown()


@pytest.fixture
def tills():
    pool = _Tills()
    yield pool
    pool.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "without a key"])
def test_racing_test_sales_never_stop_the_live_one(merchant, live_key, sale, forgery, keyed, tills):
    # A forgery holds the printed token and code; then seven more, of seven test merchants,
    # race the shop's own sale for them, round after round.
    headers = {"Authorization": f"Bearer {live_key.key}"} if keyed else {}
    racers = [
        Merchant.objects.create(string_id=f"test-racer-{i}", name="Racer", is_test=True, require_api_key=False)
        for i in range(_Tills.SIZE)
    ]
    set_aside = 0
    for round_number in range(5):
        token = f"rcpt_race{round_number:04d}_aaaaaa"
        mine = {**sale, "token": token, "short_code": derived_short_code(token)}
        theirs = [({**forgery, **mine, "merchant_string_id": racer.string_id}, {}) for racer in racers]
        assert tills.post_at_once(theirs[:1])[0][0] == 200
        results = tills.post_at_once([*theirs[1:4], (mine, headers), *theirs[4:]])
        status, body = results[3]
        assert status == 200, body
        assert (body["result"]["data"]["token"], body["result"]["data"]["short_code"]) == (
            token,
            mine["short_code"],
        )
        assert {status for status, _ in results} <= {200, 409}
        for reference in (token, mine["short_code"]):
            found = Client().get("/api/trpc/getReceipt", {"input": json.dumps({"token": reference})})
            assert json.loads(found.content)["result"]["data"]["merchant_id"] == merchant.pk
        assert Receipt.objects.filter(token=token, livemode=True, merchant=merchant).count() == 1
        assert SetAside.objects.count() > set_aside  # the forgery that held them, at least, was set aside
        set_aside = SetAside.objects.count()
