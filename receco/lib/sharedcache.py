"""The shared cache (Redis, REDIS_URL) as every request uses it, and the guard that keeps
an outage of it from failing a request.

Counters and versions live in Redis when REDIS_URL is set. When it is unreachable the
API keeps answering: the limits fail open, counts are lost and a warning is logged.
After a failure this process leaves Redis alone for a few seconds, so an outage costs
one timeout per process every few seconds rather than several per request. That pause
is per process on purpose: it is a guard against waiting on a dead server, not shared
state.

Each thread keeps one connection for the command every API request sends
(``held_connection``): redis-py's way around one command (taking a connection from the
pool and giving it back, a poll of the socket, the retry machinery, checking arguments
that hiredis checks again) costs more than the command. redis-py connects it (the
password, the database number, TLS); the command and its reply then go straight through
its socket and a hiredis reader of its own.
"""

import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import hiredis
import redis
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse
from redis.exceptions import TimeoutError as RedisTimeoutError

from receco.ops import metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Seconds this process skips Redis after it failed.
PAUSE_AFTER_FAILURE = 5.0
# A Redis outage must slow no request by more than this.
TIMEOUT = 0.5

_paused_until = 0.0
_held = threading.local()


def guarded(what: str, operation: Callable[[], T], fallback: T) -> T:
    """Return ``operation()``, or ``fallback`` if Redis fails or is paused after a failure."""
    global _paused_until
    if time.monotonic() < _paused_until:
        metrics.cache_failed_open(what)
        return fallback
    try:
        return operation()
    except Exception as exc:
        metrics.cache_failed_open(what)
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


def key(name: str) -> str:
    """``name`` under RECECO_CACHE_PREFIX: every key this service writes is under it."""
    return _prefix() + name


@functools.cache  # read for every key of every request
def _prefix() -> str:
    return f"{settings.RECECO_CACHE_PREFIX}:"


def redis_client() -> redis.Redis | None:
    """This process's client of REDIS_URL, with a pool of its own; None without REDIS_URL."""
    if not settings.REDIS_URL:
        return None
    return _client(settings.REDIS_URL, os.getpid())


@functools.cache
def _client(url: str, pid: int) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)


@receiver(setting_changed)
def _forget_client(setting, **kwargs):
    if setting == "REDIS_URL":
        _client.cache_clear()
        _held.__dict__.clear()
    if setting == "RECECO_CACHE_PREFIX":
        _prefix.cache_clear()


class HeldConnection:
    """One connection of the client's pool, kept by one thread for the rest of the process.

    A connection found broken is dropped and the command sent once more on a new one, as
    the client would; a second failure is raised.
    """

    def __init__(self, pool):
        self.pool = pool
        self.connection = None
        self._socket = None  # the connection's while it is connected
        self._reader = None
        self._buffer = bytearray(65536)

    def execute(self, *args):
        """Send one command (its name and arguments as str, bytes or int) and return its
        reply; raises ResponseError (NoScriptError, ...) and the like."""
        packed = hiredis.pack_command(args)
        try:
            return self._send(packed)
        except (RedisConnectionError, RedisTimeoutError, OSError):
            pass  # on a new socket once more; its failure is raised
        return self._send(packed)

    def _send(self, packed: bytes):
        sock = self._socket or self._connect()
        reader, buffer = self._reader, self._buffer
        try:
            sock.sendall(packed)
            reply = reader.gets()
            while reply is False:
                size = sock.recv_into(buffer)  # a timeout raises
                if not size:
                    raise RedisConnectionError("Connection closed by the server")
                reader.feed(buffer, 0, size)
                reply = reader.gets()
        except BaseException:
            self._drop()  # a reply that comes late must never be read as the next command's
            raise
        if isinstance(reply, redis.ResponseError):
            raise reply
        return reply

    def _connect(self):
        if self.connection is None:
            self.connection = self.pool.get_connection()  # connected; held until the process ends
        else:
            self.connection.connect()
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=self.connection._parser.parse_error)
        self._socket = self.connection._sock
        return self._socket

    def _drop(self) -> None:
        self._socket = self._reader = None
        if self.connection is not None:
            self.connection.disconnect()


def held_connection() -> HeldConnection | None:
    """This thread's HeldConnection to REDIS_URL, or None without REDIS_URL."""
    held = getattr(_held, "connection", None)
    if held is None:
        client = redis_client()
        if client is None:
            return None
        held = _held.connection = HeldConnection(client.connection_pool)
    return held


def _forget_the_parent() -> None:
    # A forked child makes its own connection: the parent's socket is not its to use.
    _held.__dict__.clear()


os.register_at_fork(after_in_child=_forget_the_parent)
