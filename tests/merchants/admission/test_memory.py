"""Each process remembers the keys and merchants it read (merchants.admission.memory),
checked on every call against a version in the shared store that any change to keys or
merchants replaces."""

import json
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from merchants.admission import memory
from merchants.keys import LOOKUP_LENGTH, LOOKUP_START, MALFORMED_KEY, SECRET_LENGTH, _checksum, revoke_key
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db


def _get(api, issued):
    return api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})}, headers=bearer(issued))


def _key_queries(queries) -> list[str]:
    return [query["sql"] for query in queries if 'FROM "merchants_apikey"' in query["sql"]]


def test_a_key_is_remembered_from_its_first_call(api, stored, live_key):
    # Tagged with the version read before the key was: the next call trusts it at once.
    assert _get(api, live_key).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, live_key).status_code == 200
    assert _key_queries(queries) == []


def test_a_remembered_key_costs_no_query(api, stored, live_key):
    assert _get(api, live_key).status_code == 200
    assert _get(api, live_key).status_code == 200  # now tagged with the version the calls read
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, live_key).status_code == 200
    assert _key_queries(queries) == []


def test_a_revoked_key_stops_at_the_next_call(api, stored, live_key):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    revoke_key(live_key.api_key)
    response = _get(api, live_key)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "API key has been revoked"


def test_revoking_in_the_admin_stops_a_remembered_key_at_the_next_call(api, client, owner, stored, live_key):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    client.force_login(owner)
    assert client.post(f"/admin/merchants/apikey/{live_key.api_key.pk}/revoke/").status_code == 302
    response = _get(api, live_key)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "API key has been revoked"


def test_revoking_with_the_command_stops_a_remembered_key_at_the_next_call(api, stored, live_key):
    from django.core.management import call_command

    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    call_command("revokeapikey", live_key.api_key.prefix)
    assert _get(api, live_key).status_code == 401


def test_a_suspended_merchant_stops_its_remembered_keys(api, stored, live_key, merchant):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    merchant.set_suspended(True)
    assert _get(api, live_key).status_code == 403


def test_any_saved_key_makes_every_key_read_again(api, stored, live_key, test_key):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    test_key.api_key.name = "Renamed"
    test_key.api_key.save()
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, live_key).status_code == 200
    assert len(_key_queries(queries)) == 1


def test_a_key_is_not_remembered_for_longer_than_max_age(api, stored, live_key, monkeypatch):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    monkeypatch.setattr(memory, "MAX_AGE", -1.0)
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, live_key).status_code == 200
    assert len(_key_queries(queries)) == 1


def _forged(issued, secret: str) -> str:
    """A well-formed key (valid checksum) with ``issued``'s lookup id and another secret."""
    body = issued.key[: LOOKUP_START + LOOKUP_LENGTH] + secret
    return body + _checksum(body)


def test_a_remembered_lookup_id_with_another_secret_is_refused_without_a_query(api, stored, live_key):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    forged = SimpleNamespace(key=_forged(live_key, "x" * SECRET_LENGTH))
    with CaptureQueriesContext(connection) as queries:
        response = _get(api, forged)
    assert response.status_code == 401
    assert response.json() == error_envelope(401, "UNAUTHORIZED", "Invalid API key", "getReceipt")
    assert _key_queries(queries) == []


def test_a_remembered_key_with_a_broken_checksum_is_still_malformed(api, stored, live_key):
    assert [_get(api, live_key).status_code for _ in range(2)] == [200, 200]
    broken = SimpleNamespace(key=live_key.key[:-1] + ("A" if live_key.key[-1] != "A" else "B"))
    response = _get(api, broken)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == MALFORMED_KEY


# --- merchants ---------------------------------------------------------------------


def _merchant_queries(queries) -> list[str]:
    return [query["sql"] for query in queries if 'FROM "merchants_merchant"' in query["sql"]]


def test_a_receipt_is_read_without_its_merchant(api, stored):
    # Whoever may read it does not depend on its merchant: the one query is the receipt.
    # The identity it states (its merchant's registration number) is read once, then
    # remembered under the shared version like the merchants sales name.
    with CaptureQueriesContext(connection) as first:
        api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})})
    assert len(_merchant_queries(first)) == 1
    with CaptureQueriesContext(connection) as queries:
        response = api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})})
    assert response.status_code == 200
    assert response.json()["result"]["data"]["merchant_name"] == "Mama Put Kitchen"
    assert _merchant_queries(queries) == []
    assert len(queries) == 1


def test_a_changed_registration_number_is_stated_at_the_next_read(api, stored, merchant):
    def registration():
        response = api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})})
        return response.json()["result"]["data"]["merchant_registration_number"]

    assert registration() is None
    merchant.registration_number = "RC1234567"
    merchant.save()
    assert registration() == "RC1234567"


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
    monkeypatch.setattr(memory, "MAX_AGE", -1.0)
    with CaptureQueriesContext(connection) as queries:
        assert _create(api, sale, "rcpt_second001_aaaaaa")[0] == 200
    assert len(_merchant_queries(queries)) == 1


def test_a_key_reads_its_receipt_in_one_query(api, stored, live_key):
    assert _get(api, live_key).status_code == 200  # the key is read, then remembered
    with CaptureQueriesContext(connection) as queries:
        assert _get(api, live_key).status_code == 200
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
