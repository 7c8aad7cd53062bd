"""The shared cache (Redis, REDIS_URL) as every request uses it, and the guard that keeps
an outage of it from failing a request.

Counters and versions live in Redis when REDIS_URL is set. When it is unreachable the
API keeps answering: the limits fail open, counts are lost and a warning is logged.
After a failure this process leaves Redis alone for a few seconds, so an outage costs
one timeout per process every few seconds rather than several per request. That pause
is per process on purpose: it is a guard against waiting on a dead server, not shared
state.

Commands go through redis-py's client (``redis_client``), one per thread, each holding one
connection of the process's pool. A connection found broken is dropped and the command sent once more on a new
one; a second failure is raised. A command that timed out drops its connection, so a
reply that comes late is never read as the next command's.
"""

import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import redis
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from redis.backoff import NoBackoff
from redis.retry import Retry

from receco.ops import metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Seconds this process skips Redis after it failed.
PAUSE_AFTER_FAILURE = 5.0
# A Redis outage must slow no request by more than this.
TIMEOUT = 0.5

_paused_until = 0.0
_held = threading.local()  # each thread's client, by process and URL


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
    """This thread's client of REDIS_URL; None without REDIS_URL.

    Each thread's client holds one connection of the process's pool
    (``single_connection_client``): taking a connection from the pool and giving it back
    around every command costs a request more than the command (a third of a getReceipt's
    Python, bench/cpu.py). Pipelines take connections of their own from the pool."""
    if not settings.REDIS_URL:
        return None
    clients = _held.__dict__.setdefault(os.getpid(), {})
    client = clients.get(settings.REDIS_URL)
    if client is None:
        shared = _client(settings.REDIS_URL, os.getpid())
        try:  # it connects at once
            client = redis.Redis(connection_pool=shared.connection_pool, single_connection_client=True)
        except redis.RedisError:
            return shared  # Redis away: its commands fail where they are sent, and are guarded there
        clients[settings.REDIS_URL] = client
    return client


@functools.cache
def _client(url: str, pid: int) -> redis.Redis:
    # Once more on a new connection, at once: an outage costs one timeout a try, no back-off.
    return redis.Redis.from_url(
        url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT, retry=Retry(NoBackoff(), retries=1)
    )


@receiver(setting_changed)
def _forget_client(setting, **kwargs):
    if setting == "REDIS_URL":
        _client.cache_clear()
        _held.__dict__.clear()
    if setting == "RECECO_CACHE_PREFIX":
        _prefix.cache_clear()
