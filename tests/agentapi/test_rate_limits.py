"""Rate limits: live keys, test keys, anonymous addresses, failed look-ups (merchants.admission).

The limits are made tiny through settings; the counters live in the admission store:
local memory on a bare machine, Redis when REDIS_URL is set (CI).
"""

import json

import pytest
from django.conf import settings as django_settings

from merchants.admission import limits
from receco.lib import sharedcache
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

NOW = 1_800_000_000.25  # a fixed instant, so no test straddles a window boundary


@pytest.fixture(autouse=True)
def _frozen_windows(monkeypatch):
    monkeypatch.setattr(limits, "clock", lambda: NOW)


def _get(api, reference="STORE1", ip="203.0.113.7", **headers):
    response = api.client.get(
        "/api/trpc/getReceipt", {"input": json.dumps({"token": reference})}, headers=headers, REMOTE_ADDR=ip
    )
    return response


class TestLiveKeys:
    def test_it_limits_a_live_key_per_minute(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["3/m", "100/s"]
        assert [_get(api, **bearer(live_key)).status_code for _ in range(3)] == [200, 200, 200]
        response = _get(api, **bearer(live_key))
        assert response.status_code == 429
        assert response.json() == error_envelope(
            429, "TOO_MANY_REQUESTS", "Rate limit exceeded: at most 3 per minute for this API key", "getReceipt"
        )
        assert 1 <= int(response["Retry-After"]) <= 60

    def test_it_limits_bursts_per_second(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["1000/m", "2/s"]
        assert [_get(api, **bearer(live_key)).status_code for _ in range(3)] == [200, 200, 429]
        response = _get(api, **bearer(live_key))
        assert response.json()["error"]["message"] == "Rate limit exceeded: at most 2 per second for this API key"
        assert response["Retry-After"] == "1"

    def test_the_default_is_1000_a_minute_and_100_a_second(self, api, stored, live_key):
        response = _get(api, **bearer(live_key))
        assert response["RateLimit-Policy"] == '"minute";q=1000;w=60, "second";q=100;w=1'

    def test_keyed_responses_say_where_the_key_stands(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["5/m", "3/s"]
        _get(api, **bearer(live_key))
        response = _get(api, **bearer(live_key))
        assert response.status_code == 200
        assert response["RateLimit-Policy"] == '"minute";q=5;w=60, "second";q=3;w=1'
        minute, second = response["RateLimit"].split(", ")
        assert minute.startswith('"minute";r=3;t=')
        assert second == '"second";r=1;t=1'
        assert 1 <= int(minute.rsplit("=", 1)[1]) <= 60

    def test_a_429_also_carries_the_ratelimit_headers(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["1/m"]
        _get(api, **bearer(live_key))
        response = _get(api, **bearer(live_key))
        assert response.status_code == 429
        reset = response["RateLimit"].rsplit("=", 1)[1]
        assert response["RateLimit"] == f'"minute";r=0;t={reset}'
        assert response["Retry-After"] == reset

    def test_keys_are_counted_separately(self, api, stored, live_key, merchant, settings):
        from merchants.keys import issue_key

        settings.RECECO_RATELIMIT_LIVE_KEY = ["1/m"]
        second = issue_key(merchant, "live")
        assert _get(api, **bearer(live_key)).status_code == 200
        assert _get(api, **bearer(second)).status_code == 200
        assert _get(api, **bearer(live_key)).status_code == 429

    def test_a_key_is_limited_whatever_address_it_comes_from(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["2/m"]
        statuses = [_get(api, ip=f"198.51.100.{n}", **bearer(live_key)).status_code for n in range(3)]
        assert statuses == [200, 200, 429]

    def test_each_call_of_a_batch_counts(self, api, stored, live_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["2/m"]
        inputs = json.dumps({str(n): {"token": "STORE1"} for n in range(3)})
        response = api.client.get(
            "/api/trpc/getReceipt,getReceipt,getReceipt", {"batch": "1", "input": inputs}, headers=bearer(live_key)
        )
        assert response.status_code == 207
        body = response.json()
        assert [("result" in entry) for entry in body] == [True, True, False]
        assert body[2]["error"]["data"] == {"code": "TOO_MANY_REQUESTS", "httpStatus": 429, "path": "getReceipt"}
        assert int(response["Retry-After"]) >= 1


class TestTestKeys:
    def test_test_keys_are_not_limited(self, api, sale, test_key, settings):
        settings.RECECO_RATELIMIT_LIVE_KEY = ["1/m"]
        settings.RECECO_RATELIMIT_ANONYMOUS = ["1/m"]
        for n in range(5):
            response = api.client.post(
                "/api/trpc/createReceiptFromPOS",
                json.dumps({**sale, "token": f"rcpt_testkey_{n:06d}", "short_code": None}),
                content_type="application/json",
                headers=bearer(test_key),
            )
            assert response.status_code == 200, response.content
            assert "RateLimit" not in response
            assert "RateLimit-Policy" not in response


class TestAnonymousCallers:
    def test_it_limits_each_address(self, api, stored, settings):
        settings.RECECO_RATELIMIT_ANONYMOUS = ["2/m"]
        assert [_get(api).status_code for _ in range(3)] == [200, 200, 429]
        response = _get(api)
        assert response.json() == error_envelope(
            429,
            "TOO_MANY_REQUESTS",
            "Rate limit exceeded: at most 2 per minute from one address without an API key",
            "getReceipt",
        )
        assert 1 <= int(response["Retry-After"]) <= 60
        assert "RateLimit" not in response

    def test_other_addresses_are_not_affected(self, api, stored, settings):
        settings.RECECO_RATELIMIT_ANONYMOUS = ["1/m"]
        assert _get(api, ip="203.0.113.7").status_code == 200
        assert _get(api, ip="203.0.113.7").status_code == 429
        assert _get(api, ip="203.0.113.8").status_code == 200

    def test_the_default_is_generous(self, api, stored):
        assert django_settings.RECECO_RATELIMIT_ANONYMOUS == ["600/m"]
        assert all(_get(api).status_code == 200 for _ in range(25))

    def test_x_forwarded_for_is_ignored_unless_a_proxy_is_trusted(self, api, stored, settings):
        settings.RECECO_RATELIMIT_ANONYMOUS = ["1/m"]
        assert _get(api, HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 200
        assert _get(api, **{"X-Forwarded-For": "192.0.2.2"}).status_code == 429

    def test_behind_a_trusted_proxy_the_forwarded_address_counts(self, api, stored, settings):
        settings.RECECO_RATELIMIT_ANONYMOUS = ["1/m"]
        settings.RECECO_TRUSTED_PROXY_COUNT = 1
        proxy = "10.0.0.2"
        assert _get(api, ip=proxy, **{"X-Forwarded-For": "192.0.2.1"}).status_code == 200
        assert _get(api, ip=proxy, **{"X-Forwarded-For": "192.0.2.2"}).status_code == 200
        # A client cannot escape by writing its own X-Forwarded-For: the proxy appends the real one.
        assert _get(api, ip=proxy, **{"X-Forwarded-For": "6.6.6.6, 192.0.2.1"}).status_code == 429

    def test_failed_keys_count_against_the_address(self, api, stored, settings):
        settings.RECECO_RATELIMIT_ANONYMOUS = ["2/m"]
        assert _get(api, Authorization="Bearer poslive_guess").status_code == 401
        assert _get(api, Authorization="Bearer poslive_guess").status_code == 401
        response = _get(api, Authorization="Bearer poslive_guess")
        assert response.status_code == 429
        assert response.json()["error"]["data"]["code"] == "TOO_MANY_REQUESTS"


class TestFailedLookups:
    def test_not_found_lookups_are_limited_tightly(self, api, stored, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "3/m"
        assert [_get(api, reference=f"ZZZZZ{n}").status_code for n in range(3)] == [404, 404, 404]
        response = _get(api, reference="ZZZZZ9")
        assert response.status_code == 429
        assert response.json() == error_envelope(
            429, "TOO_MANY_REQUESTS", "Too many failed look-ups: at most 3 per minute; try again later", "getReceipt"
        )
        assert 1 <= int(response["Retry-After"]) <= 60

    def test_once_exhausted_even_real_codes_wait(self, api, stored, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/m"
        _get(api, reference="ZZZZZ1"), _get(api, reference="ZZZZZ2")
        assert _get(api, reference="STORE1").status_code == 429

    def test_a_full_token_is_never_refused(self, api, stored, settings):
        # Carrier NAT: a whole mall shares the address of one person's typos. What a QR
        # code holds cannot be guessed, so it always opens its receipt.
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/m"
        _get(api, reference="ZZZZZ1"), _get(api, reference="ZZZZZ2")
        assert _get(api, reference="ZZZZZ3").status_code == 429
        assert _get(api, reference=stored.token).status_code == 200

    def test_unknown_tokens_do_not_count(self, api, stored, settings):
        # QR codes of sales an offline till has not uploaded yet must not use up the budget.
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/m"
        assert [_get(api, reference=f"rcpt_notyet00_{n:06d}").status_code for n in range(5)] == [404] * 5
        assert _get(api, reference="ZZZZZ1").status_code == 404

    def test_the_default_is_30_a_minute(self, api, stored):
        statuses = [_get(api, reference=f"ZZZZ{n:02d}").status_code for n in range(31)]
        assert statuses == [404] * 30 + [429]

    def test_found_receipts_do_not_count(self, api, stored, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/m"
        assert all(_get(api).status_code == 200 for _ in range(5))
        assert _get(api, reference="ZZZZZ1").status_code == 404

    def test_updates_count_too(self, api, stored, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/m"
        body = {"token": "ZZZZZ1", "email": "a@example.com"}
        assert api.post("updateReceiptContact", body)[0] == 404
        status, response = api.post("updateReceiptContact", body)
        assert status == 429
        assert response["error"]["data"]["code"] == "TOO_MANY_REQUESTS"

    def test_another_merchants_receipts_count_as_misses(self, api, stored, other_live_key, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/m"
        assert _get(api, **bearer(other_live_key)).status_code == 404
        assert _get(api, **bearer(other_live_key)).status_code == 404
        assert _get(api, **bearer(other_live_key)).status_code == 429

    def test_bringing_several_keys_does_not_multiply_the_budget(self, api, stored, merchant, other_merchant, settings):
        from merchants.keys import issue_key

        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "4/m"
        keys = [issue_key(other_merchant, "test", f"k{n}") for n in range(4)]
        callers = [bearer(key) for key in keys] + [{}]
        statuses = [_get(api, reference=f"ZZZZ{n:02d}", **callers[n % 5]).status_code for n in range(10)]
        assert statuses == [404] * 4 + [429] * 6

    def test_the_budget_is_per_address(self, api, stored, settings):
        settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/m"
        assert _get(api, reference="ZZZZZ1", ip="203.0.113.7").status_code == 404
        assert _get(api, reference="ZZZZZ2", ip="203.0.113.7").status_code == 429
        assert _get(api, reference="ZZZZZ2", ip="198.51.100.20").status_code == 404


@pytest.mark.redis
def test_the_counters_live_in_redis(api, stored, live_key):
    _get(api, **bearer(live_key))
    client = sharedcache.redis_client()
    names = list(client.scan_iter(match=sharedcache.key("rl:*")))
    # The key's minute and second windows; failed look-ups are only read, and none were stored.
    assert sorted(int(client.get(name)) for name in names) == [1, 1]
    assert all(0 < client.ttl(name) <= 61 for name in names)


@pytest.mark.redis
def test_a_dropped_redis_connection_is_replaced_without_failing_open(api, stored, settings, caplog):
    settings.RECECO_RATELIMIT_ANONYMOUS = ["3/m"]
    assert _get(api).status_code == 200
    # What a Redis restart or an idle timeout does to the connection each process holds:
    # that one connection is closed by the server (never anyone else's).
    client = sharedcache.redis_client()
    client_id = client.client_id()  # on the connection the calls took, given back to the pool
    assert client.client_kill_filter(_id=client_id, skipme=False) == 1  # closed once it answered
    assert [_get(api).status_code for _ in range(3)] == [200, 200, 429]
    assert "Shared cache unavailable" not in caplog.text
