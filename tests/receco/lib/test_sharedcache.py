"""receco.lib.sharedcache: the client every request's command goes through, and the guard
that keeps an outage of Redis from failing a request."""

import time

import pytest
import redis

from receco.lib import sharedcache


@pytest.fixture
def client(settings):
    sharedcache.reset()
    yield sharedcache.redis_client()
    sharedcache.reset()


@pytest.mark.redis
def test_a_command_is_answered_and_an_error_reply_raised(client):
    name = sharedcache.key("test:client")
    assert client.execute_command("SET", name, 7, "EX", 10) is True
    assert client.execute_command("INCR", name) == 8
    with pytest.raises(redis.ResponseError, match="not an integer"):
        client.execute_command("INCRBY", name, "x")
    assert client.execute_command("DEL", name) == 1


@pytest.mark.redis
def test_a_reply_that_came_too_late_is_never_read_as_the_next_commands(client):
    # BLPOP blocks its connection for two seconds; each of the two tries gives up after TIMEOUT.
    started = time.monotonic()
    with pytest.raises(redis.TimeoutError):
        client.execute_command("BLPOP", sharedcache.key("test:never-filled"), 2 * sharedcache.TIMEOUT + 1)
    assert time.monotonic() - started < 3 * sharedcache.TIMEOUT  # tried twice, no back-off
    time.sleep(2 * sharedcache.TIMEOUT + 1.2)  # the late reply (nil) has come by now, had its socket been kept
    assert client.execute_command("PING") is True


def test_an_outage_fails_open_and_pauses_redis_for_this_process(settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    sharedcache.reset()
    try:
        assert sharedcache.guarded("a test", lambda: sharedcache.redis_client().incr("x"), "open") == "open"
        # Paused: the next call does not try, so it waits for nothing.
        assert sharedcache.guarded("a test", lambda: pytest.fail("tried during the pause"), "open") == "open"
    finally:
        sharedcache.reset()
    assert "Shared cache unavailable during a test (ConnectionError" in caplog.text
