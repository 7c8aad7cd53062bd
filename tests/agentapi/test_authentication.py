"""Every rule of docs/api.md, "API keys and who may do what", on all three procedures."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from merchants.keys import generate_key, issue_key, revoke_key, rotate_key
from receipts.models import Receipt
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

# What a key looks like and where to get one (the SDKs' READMEs show placeholders like test-key).
MALFORMED = (
    "Malformed API key: a key is 58 characters starting with postest_ (test) or poslive_ (live), sent as "
    "'Authorization: Bearer <key>'. A merchant's owner makes one in the dashboard (/admin/, Merchants > API keys > "
    "Create a key); the operator with 'manage.py createapikey'"
)


def _create(api, sale, **headers):
    return api.post("createReceiptFromPOS", sale, **headers)


def _get(api, token, **headers):
    return api.get("getReceipt", {"token": token}, **headers)


def _update(api, token, **headers):
    return api.post("updateReceiptContact", {"token": token, "email": "c@example.com"}, **headers)


CALLS = {
    "createReceiptFromPOS": lambda api, receipt, sale, headers: _create(api, sale, **headers),
    "getReceipt": lambda api, receipt, sale, headers: _get(api, receipt.token, **headers),
    "updateReceiptContact": lambda api, receipt, sale, headers: _update(api, receipt.token, **headers),
}


class TestWithoutAKey:
    @pytest.mark.parametrize("path", CALLS)
    def test_every_procedure_works_without_a_key(self, api, stored, sale, path):
        status, body = CALLS[path](api, stored, sale, {})
        assert status == 200, body

    @pytest.mark.parametrize("header", ["Bearer ", "Bearer", "bearer undefined", "Bearer null", ""])
    def test_an_empty_bearer_counts_as_no_key(self, api, stored, header):
        status, body = _get(api, stored.token, Authorization=header)
        assert status == 200
        assert body["result"]["data"]["id"] == stored.pk

    def test_it_requires_a_key_to_create_when_the_merchant_does(self, api, sale, merchant):
        merchant.require_api_key = True
        merchant.save()
        status, body = _create(api, sale)
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", "createReceiptFromPOS")

    @pytest.mark.parametrize("path", ["getReceipt", "updateReceiptContact"])
    def test_customers_read_and_ask_for_copies_without_a_key_when_it_is_required(
        self, api, stored, sale, merchant, path
    ):
        merchant.require_api_key = True
        merchant.save()
        status, body = CALLS[path](api, stored, sale, {})
        assert status == 200, body

    def test_an_empty_bearer_is_refused_when_a_key_is_required(self, api, sale, merchant):
        merchant.require_api_key = True
        merchant.save()
        status, body = _create(api, sale, Authorization="Bearer undefined")
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "API key required for this merchant", "createReceiptFromPOS")

    def test_a_required_key_does_not_stop_other_merchants(self, api, sale, merchant, other_merchant):
        merchant.require_api_key = True
        merchant.save()
        other_merchant.require_api_key = False
        other_merchant.save()
        status, _ = _create(api, {**sale, "merchant_string_id": other_merchant.string_id})
        assert status == 200


class TestWithAValidKey:
    @pytest.mark.parametrize("path", CALLS)
    def test_every_procedure_accepts_the_merchants_key(self, api, stored, sale, live_key, path):
        status, body = CALLS[path](api, stored, sale, bearer(live_key))
        assert status == 200, body

    def test_a_bare_key_is_accepted(self, api, stored, live_key):
        status, _ = _get(api, stored.token, Authorization=live_key.key)
        assert status == 200

    def test_the_scheme_is_case_insensitive_and_spaces_are_trimmed(self, api, stored, live_key):
        status, _ = _get(api, stored.token, Authorization=f"  bEaReR   {live_key.key}  ")
        assert status == 200

    def test_it_satisfies_a_merchant_that_requires_a_key(self, api, sale, merchant, live_key):
        merchant.require_api_key = True
        merchant.save()
        status, _ = _create(api, sale, **bearer(live_key))
        assert status == 200

    def test_admitting_a_key_not_remembered_yet_is_one_query(self, live_key):
        from tests.helpers import admitted_key

        with CaptureQueriesContext(connection) as queries:
            assert admitted_key(live_key.key).pk == live_key.api_key.pk
        reads = [query["sql"] for query in queries.captured_queries if query["sql"].startswith("SELECT")]
        assert len(reads) == 1  # the key with its merchant (and its last use noted, once a minute)
        with CaptureQueriesContext(connection) as queries:
            assert admitted_key(live_key.key).pk == live_key.api_key.pk
        assert len(queries) == 0  # remembered: proved by its digest alone


class TestWithABadKey:
    @pytest.mark.parametrize("path", CALLS)
    def test_it_refuses_a_malformed_key(self, api, stored, sale, path):
        status, body = CALLS[path](api, stored, sale, {"Authorization": "Bearer sk_live_123"})
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", MALFORMED, path)

    def test_the_sdks_placeholder_key_is_told_what_a_key_looks_like_and_where_to_get_one(self, api, stored):
        # The public SDKs' READMEs show `test-key`; their users send it as it is.
        status, body = _get(api, stored.token, Authorization="Bearer test-key")
        assert status == 401
        assert body["error"]["message"].startswith("Malformed API key: a key is 58 characters starting with postest_")
        assert "Merchants > API keys > Create a key" in body["error"]["message"]

    def test_it_refuses_a_mistyped_key_before_any_query(self, api, stored, live_key):
        key = live_key.key
        typo = key[:20] + ("A" if key[20] != "A" else "B") + key[21:]
        with CaptureQueriesContext(connection) as queries:
            status, body = _get(api, stored.token, Authorization=f"Bearer {typo}")
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", MALFORMED, "getReceipt")
        assert not [q for q in queries if "merchants_apikey" in q["sql"]]

    @pytest.mark.parametrize("path", CALLS)
    def test_it_refuses_an_unknown_key(self, api, stored, sale, path):
        status, body = CALLS[path](api, stored, sale, {"Authorization": f"Bearer {generate_key('live')}"})
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "Invalid API key", path)

    def test_it_refuses_a_known_prefix_with_the_wrong_secret(self, api, stored, live_key):
        forged = generate_key("live")
        forged_body = live_key.key[:20] + forged[20:-6]
        from merchants.keys import _checksum

        status, body = _get(api, stored.token, Authorization=f"Bearer {forged_body + _checksum(forged_body)}")
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "Invalid API key", "getReceipt")

    def test_it_refuses_a_key_whose_type_was_changed(self, api, stored, live_key):
        from merchants.keys import _checksum

        body_part = "postest_" + live_key.key[8:-6]
        status, body = _get(api, stored.token, Authorization=f"Bearer {body_part + _checksum(body_part)}")
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "Invalid API key", "getReceipt")

    @pytest.mark.parametrize("path", CALLS)
    def test_it_refuses_a_revoked_key(self, api, stored, sale, live_key, path):
        revoke_key(live_key.api_key)
        status, body = CALLS[path](api, stored, sale, bearer(live_key))
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "API key has been revoked", path)

    @pytest.mark.parametrize("path", CALLS)
    def test_it_refuses_an_expired_key(self, api, stored, sale, live_key, path):
        rotate_key(live_key.api_key, timedelta(hours=24), now=timezone.now() - timedelta(hours=25))
        status, body = CALLS[path](api, stored, sale, bearer(live_key))
        assert status == 401
        assert body == error_envelope(401, "UNAUTHORIZED", "API key has expired", path)

    def test_a_rotated_key_works_during_its_grace_period(self, api, stored, live_key):
        issued = rotate_key(live_key.api_key, timedelta(hours=24))
        assert _get(api, stored.token, **bearer(live_key))[0] == 200
        assert _get(api, stored.token, **bearer(issued))[0] == 200

    def test_it_refuses_another_scheme(self, api, stored):
        status, body = _get(api, stored.token, Authorization="Basic dXNlcjpwYXNz")
        assert status == 401
        assert body == error_envelope(
            401,
            "UNAUTHORIZED",
            "Unsupported Authorization scheme: send 'Authorization: Bearer <API key>'",
            "getReceipt",
        )

    def test_a_bad_key_fails_every_call_of_a_batch(self, api, stored):
        inputs = '{"0": {"token": "STORE1"}, "1": {"token": "STORE1"}}'
        response = api.client.get(
            "/api/trpc/getReceipt,getReceipt",
            {"batch": "1", "input": inputs},
            headers={"Authorization": "Bearer poslive_nope"},
        )
        assert response.status_code == 401
        assert response.json() == [error_envelope(401, "UNAUTHORIZED", MALFORMED, "getReceipt")] * 2

    def test_an_unknown_procedure_is_still_not_found(self, api):
        status, body = api.get("nope", {}, Authorization="Bearer poslive_nope")
        assert status == 404
        assert body["error"]["data"]["code"] == "NOT_FOUND"


class TestAnotherMerchantsKey:
    def test_it_cannot_create_receipts_for_another_merchant(self, api, sale, other_live_key):
        status, body = _create(api, sale, **bearer(other_live_key))
        assert status == 403
        assert body == error_envelope(403, "FORBIDDEN", "API key belongs to another merchant", "createReceiptFromPOS")
        assert not Receipt.objects.exists()

    def test_it_does_not_create_a_test_merchant_it_does_not_own(self, api, sale, other_live_key):
        status, _ = _create(api, {**sale, "merchant_string_id": "test-someone"}, **bearer(other_live_key))
        assert status == 403
        from merchants.models import Merchant

        assert not Merchant.objects.filter(string_id="test-someone").exists()

    @pytest.mark.parametrize("reference", ["token", "short_code"])
    def test_another_merchants_receipt_is_not_found_like_an_unknown_one(self, api, stored, other_live_key, reference):
        # A 403 would tell a key's holder that the code exists: they learn nothing.
        status, body = _get(api, getattr(stored, reference), **bearer(other_live_key))
        assert status == 404
        assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")

    def test_it_cannot_update_another_merchants_receipt(self, api, stored, other_live_key):
        status, body = _update(api, stored.token, **bearer(other_live_key))
        assert status == 404
        assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", "updateReceiptContact")
        stored.refresh_from_db()
        assert stored.customer_email is None


class TestSuspendedMerchant:
    @pytest.fixture(autouse=True)
    def _suspend(self, merchant):
        merchant.set_suspended(True)

    @pytest.mark.parametrize("path", CALLS)
    def test_its_keys_are_forbidden(self, api, stored, sale, live_key, path):
        status, body = CALLS[path](api, stored, sale, bearer(live_key))
        assert status == 403
        assert body == error_envelope(403, "FORBIDDEN", "Merchant account is suspended", path)

    def test_it_gets_no_new_receipts_without_a_key_either(self, api, sale):
        status, body = _create(api, {**sale, "token": "rcpt_suspend_bbbbbb"})
        assert status == 403
        assert body == error_envelope(403, "FORBIDDEN", "Merchant account is suspended", "createReceiptFromPOS")

    def test_customers_still_read_their_receipts(self, api, stored):
        status, _ = _get(api, stored.short_code)
        assert status == 200

    def test_reactivating_restores_its_keys(self, api, stored, merchant, live_key):
        merchant.set_suspended(False)
        assert _get(api, stored.token, **bearer(live_key))[0] == 200


class TestTestKeys:
    def test_a_test_key_cannot_reach_live_receipts(self, api, stored, test_key):
        status, body = _get(api, stored.token, **bearer(test_key))
        assert status == 403
        assert body == error_envelope(
            403, "FORBIDDEN", "A test key cannot access live receipts: use a live key", "getReceipt"
        )

    def test_a_test_key_reaches_test_receipts(self, api, sale, test_key):
        _, created = _create(api, sale, **bearer(test_key))
        status, body = _get(api, created["result"]["data"]["token"], **bearer(test_key))
        assert status == 200
        assert body["result"]["data"]["id"] == created["result"]["data"]["id"]


def test_a_key_of_a_test_merchant_works_for_it(api, sale, db):
    from merchants.models import Merchant

    shop = Merchant.objects.create(string_id="test-kiosk", name="Kiosk", is_test=True)
    issued = issue_key(shop, "test")
    status, _ = _create(api, {**sale, "merchant_string_id": "test-kiosk"}, **bearer(issued))
    assert status == 200


def test_a_failure_while_authenticating_answers_the_envelope(api, live_key, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("database is gone")

    monkeypatch.setattr("merchants.keys.stored_key", broken)
    status, body = api.get("getReceipt", {"token": "STORE1"}, **bearer(live_key))
    assert status == 500
    assert body == error_envelope(500, "INTERNAL_SERVER_ERROR", "Internal server error", "getReceipt")
    assert "Unexpected error in procedure getReceipt" in caplog.text
