"""Calls to the shared cache (Redis) that must never fail a request.

Rate-limit and usage counters live in the shared cache. When it is unreachable the
API keeps answering: the limits fail open and the counts are lost, and a warning is
logged. After a failure this process leaves the cache alone for a few seconds, so an
outage costs one timeout per process every few seconds rather than several per request.
That pause is per-process on purpose: it is only a guard against waiting on a dead
server, not shared state.
"""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

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
