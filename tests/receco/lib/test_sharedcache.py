"""receco.lib.sharedcache: the connection each thread holds for the API's round trip."""

import os
import time

import pytest
import redis

from receco.lib import sharedcache


@pytest.fixture
def held():
    client = redis.Redis.from_url(os.environ["REDIS_URL"], socket_timeout=0.2)
    yield sharedcache.HeldConnection(client.connection_pool)
    client.close()


@pytest.mark.redis
def test_a_command_is_answered_and_an_error_reply_raised(held):
    name = sharedcache.key("test:held")
    assert held.execute("SET", name, 7, "EX", 10) == b"OK"
    assert held.execute("INCR", name) == 8
    with pytest.raises(redis.ResponseError, match="not an integer"):
        held.execute("INCRBY", name, "x")
    assert held.execute("DEL", name) == 1


@pytest.mark.redis
def test_a_reply_that_came_too_late_is_never_read_as_the_next_commands(held):
    # BLPOP blocks this connection alone for a second; each of the two tries gives up after 0.2 s.
    with pytest.raises(TimeoutError):  # the socket's, raised by the second try
        held.execute("BLPOP", sharedcache.key("test:never-filled"), 1)
    time.sleep(1.0)  # the late reply (nil) has come by now, on the socket that was dropped
    assert held.execute("PING") == b"PONG"
