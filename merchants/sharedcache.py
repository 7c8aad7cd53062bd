"""Calls to the shared cache (Redis) that must never fail a request.

Rate-limit and usage counters live in the shared cache. When it is unreachable the
API keeps answering: the limits fail open and the counts are lost, and a warning is
logged. After a failure this process leaves the cache alone for a few seconds, so an
outage costs one timeout per process every few seconds rather than several per request.
That pause is per-process on purpose: it is only a guard against waiting on a dead
server, not shared state.
"""

import logging
import os
import time
from collections.abc import Callable
from typing import TypeVar

import hiredis
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Seconds this process skips the cache after it failed.
PAUSE_AFTER_FAILURE = 5.0

_paused_until = 0.0


def guarded(what: str, operation: Callable[[], T], fallback: T) -> T:
    """Return ``operation()``, or ``fallback`` if the cache fails or is paused."""
    global _paused_until
    if time.monotonic() < _paused_until:
        return fallback
    try:
        return operation()
    except Exception as exc:
        _paused_until = time.monotonic() + PAUSE_AFTER_FAILURE
        logger.warning(
            "Shared cache unavailable during %s (%s: %s); rate limits fail open and usage is not counted "
            "for the next %.0f s",
            what,
            type(exc).__name__,
            exc,
            PAUSE_AFTER_FAILURE,
        )
        return fallback


def reset() -> None:
    """Forget a previous failure (tests, and after the cache was reconfigured)."""
    global _paused_until
    _paused_until = 0.0


def redis_client():
    """Return the Redis client of the default cache, or None when that is not Redis.

    For commands the cache API does not offer (merchants.keycache stores its version as
    plain text), and for the pool a HeldConnection draws from. Django's cache makes a new
    client object for each command; this one is made once per cache object (one per
    thread) and shares its connection pool.
    """
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    client = backend.__dict__.get("_receco_redis_client")
    if client is None:
        client = backend.__dict__["_receco_redis_client"] = backend._cache.get_client(write=True)
    return client


class HeldConnection:
    """One connection of the cache's pool, kept by this thread for the command every
    API request sends (merchants.ratelimits).

    The client's way costs more than the command: taking a connection from the pool and
    giving it back (a lock, a poll of the socket, metrics), the retry machinery and
    checking each argument before hiredis packs them (it checks them itself). A
    connection found broken is dropped and the command sent once more on a new one, as
    the client would; a second failure is raised.
    """

    def __init__(self, pool):
        self.pool = pool
        self.pid = os.getpid()
        self.connection = None

    def execute(self, *args):
        """Send one command (its name and arguments as str or bytes) and return its reply;
        raises ResponseError and the like."""
        if self.pid != os.getpid():  # forked: the parent's socket is not ours
            self.pid, self.connection = os.getpid(), None
        try:
            return self._send(args)
        except (RedisConnectionError, RedisTimeoutError, OSError):
            if self.connection is not None:
                self.connection.disconnect()  # a new socket for the second try; its failure is raised
            return self._send(args)

    def _send(self, args: tuple):
        if self.connection is None:
            self.connection = self.pool.get_connection()  # held until the process ends
        self.connection.send_packed_command([hiredis.pack_command(args)])
        return self.connection.read_response()


def held_connection() -> HeldConnection | None:
    """This thread's HeldConnection to the default cache, or None when that is not Redis."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    held = backend.__dict__.get("_receco_held_connection")
    if held is None:
        held = backend.__dict__["_receco_held_connection"] = HeldConnection(redis_client().connection_pool)
    return held


def increment(name: str, timeout: int) -> None:
    """Add one to the counter ``name`` in the cache, creating it with ``timeout`` seconds
    to live. Raises if the cache is unreachable."""
    try:
        cache.incr(name)
    except ValueError:  # no such counter yet
        if not cache.add(name, 1, timeout=timeout):
            cache.incr(name)  # another process created it first
