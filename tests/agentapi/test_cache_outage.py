"""With the shared cache (Redis) unreachable, the procedures keep answering: rate limits
fail open and usage goes uncounted, with a logged warning, never a 500."""

import json
import logging
import socket

import pytest

from receco.lib import sharedcache
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_down(settings):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    settings.RECECO_RATELIMIT_LIVE_KEY = ["1/m"]
    settings.RECECO_RATELIMIT_ANONYMOUS = ["1/m"]
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/m"
    return port


def test_calls_without_a_key_are_answered(api, stored, redis_down, caplog):
    caplog.set_level(logging.WARNING, logger="receco.lib.sharedcache")
    assert [api.get("getReceipt", {"token": "STORE1"})[0] for _ in range(3)] == [200, 200, 200]
    assert "Shared cache unavailable during rate limiting" in caplog.text


def test_calls_with_a_live_key_are_answered_without_ratelimit_headers(api, stored, live_key, redis_down):
    for _ in range(3):
        response = api.client.get(
            "/api/trpc/getReceipt", {"input": json.dumps({"token": "STORE1"})}, headers=bearer(live_key)
        )
        assert response.status_code == 200
        assert "RateLimit" not in response


def test_receipts_are_still_created(api, sale, live_key, redis_down):
    status, body = api.post("createReceiptFromPOS", sale, **bearer(live_key))
    assert status == 200, body


def test_not_found_still_answers_not_found(api, redis_down):
    statuses = [api.get("getReceipt", {"token": "ZZZZZZ"})[0] for _ in range(3)]
    assert statuses == [404, 404, 404]


def test_a_failure_pauses_the_cache_for_this_process(redis_down, monkeypatch):
    calls = []

    def failing():
        calls.append(1)
        raise ConnectionError("down")

    assert sharedcache.guarded("a test", failing, "fallback") == "fallback"
    assert sharedcache.guarded("a test", failing, "fallback") == "fallback"
    assert len(calls) == 1
    monkeypatch.setattr(sharedcache, "_paused_until", 0.0)
    sharedcache.guarded("a test", failing, "fallback")
    assert len(calls) == 2
