"""Each process remembers the merchants of the receipts it serves (merchants.merchantcache),
under the same shared version as API keys: a changed merchant is read again at once."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from merchants import merchantcache
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db


def _get(api, **headers):
    return api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})}, headers=headers)


def _merchant_queries(queries) -> list[str]:
    return [query["sql"] for query in queries if 'FROM "merchants_merchant"' in query["sql"]]


def test_a_receipt_is_read_without_its_merchant(api, stored):
    # Whoever may read it does not depend on its merchant: the one query is the receipt.
    with CaptureQueriesContext(connection) as queries:
        response = _get(api)
    assert response.status_code == 200
    assert response.json()["result"]["data"]["merchant_name"] == "Mama Put Kitchen"
    assert _merchant_queries(queries) == []
    assert len(queries) == 1


def test_a_merchant_that_now_requires_a_key_is_obeyed_at_the_next_sale(api, sale, merchant):
    assert _create(api, sale, "rcpt_first0001_aaaaaa")[0] == 200
    merchant.require_api_key = True
    merchant.save()
    status, body = _create(api, sale, "rcpt_second001_aaaaaa")
    assert status == 401
    assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", "createReceiptFromPOS")


def test_another_merchant_saved_makes_it_read_again(api, sale, other_merchant):
    assert _create(api, sale, "rcpt_first0001_aaaaaa")[0] == 200
    other_merchant.name = "Renamed"
    other_merchant.save()
    with CaptureQueriesContext(connection) as queries:
        assert _create(api, sale, "rcpt_second001_aaaaaa")[0] == 200
    assert len(_merchant_queries(queries)) == 1


def test_a_merchant_is_not_remembered_for_longer_than_max_age(api, sale, monkeypatch):
    assert _create(api, sale, "rcpt_first0001_aaaaaa")[0] == 200
    monkeypatch.setattr(merchantcache.keycache, "MAX_AGE", -1.0)
    with CaptureQueriesContext(connection) as queries:
        assert _create(api, sale, "rcpt_second001_aaaaaa")[0] == 200
    assert len(_merchant_queries(queries)) == 1


def test_a_key_reads_its_receipt_in_one_query(api, stored, live_key):
    assert _get(api, **bearer(live_key)).status_code == 200  # the key is read, then remembered
    assert _get(api, **bearer(live_key)).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, **bearer(live_key)).status_code == 200
    assert len(queries) == 1  # the receipt


def _create(api, sale, token, **headers):
    return api.post("createReceiptFromPOS", {**sale, "token": token, "short_code": None}, **headers)


def test_a_sale_finds_its_remembered_merchant_without_a_query(api, sale):
    assert _create(api, sale, "rcpt_first0001_aaaaaa")[0] == 200
    with CaptureQueriesContext(connection) as queries:
        status, body = _create(api, sale, "rcpt_second001_aaaaaa")
    assert status == 200, body
    assert _merchant_queries(queries) == []


def test_a_suspended_merchant_stops_the_next_sale(api, sale, merchant):
    assert _create(api, sale, "rcpt_first0001_aaaaaa")[0] == 200
    merchant.set_suspended(True)
    status, body = _create(api, sale, "rcpt_second001_aaaaaa")
    assert status == 403
    assert body == error_envelope(403, "FORBIDDEN", "Merchant account is suspended", "createReceiptFromPOS")


def test_a_test_merchant_made_by_a_sale_is_remembered(api, sale):
    test_sale = {**sale, "merchant_string_id": "test-kiosk", "merchant_name": "Kiosk"}
    assert _create(api, test_sale, "rcpt_first0001_aaaaaa")[0] == 200
    assert _create(api, test_sale, "rcpt_second001_aaaaaa")[0] == 200  # now under the version it changed
    with CaptureQueriesContext(connection) as queries:
        assert _create(api, test_sale, "rcpt_third0001_aaaaaa")[0] == 200
    assert _merchant_queries(queries) == []


def test_a_sale_with_a_key_uses_the_keys_merchant(api, sale, live_key):
    assert _create(api, sale, "rcpt_first0001_aaaaaa", **bearer(live_key))[0] == 200
    with CaptureQueriesContext(connection) as queries:
        assert _create(api, sale, "rcpt_second001_aaaaaa", **bearer(live_key))[0] == 200
    assert _merchant_queries(queries) == []
    assert not any('FROM "merchants_apikey"' in query["sql"] for query in queries)
