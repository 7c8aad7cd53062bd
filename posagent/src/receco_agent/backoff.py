"""Retry timing: exponential back-off with jitter, and the service's Retry-After."""

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

BASE_SECONDS = 1.0
MAX_SECONDS = 300.0
# A Retry-After longer than this is treated as a mistake rather than obeyed for days.
MAX_RETRY_AFTER = 3600.0
# Past a Retry-After, a further wait of up to this share of it (at least MIN_SPREAD): the
# service says the same Retry-After to every till it turns away in the same moment, and
# tills that all came back on the dot would be turned away together again.
RETRY_AFTER_SPREAD = 0.5
MIN_SPREAD = 1.0


def delay(failures: int, rng: random.Random | None = None) -> float:
    """Return the wait in seconds after ``failures`` consecutive failures (>= 1).

    The ceiling doubles per failure up to MAX_SECONDS; the wait is drawn from its upper
    half, so tills that lost the service together do not come back in step.
    """
    ceiling = min(MAX_SECONDS, BASE_SECONDS * 2 ** max(0, failures - 1))
    return ceiling / 2 + (rng or random).uniform(0, ceiling / 2)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Return the seconds a Retry-After header asks for (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def after_retry_after(retry_after: float, rng: random.Random | None = None) -> float:
    """Return a wait of at least ``retry_after`` seconds, spread at random over the next
    RETRY_AFTER_SPREAD of it (MIN_SPREAD seconds at least)."""
    return retry_after + (rng or random).uniform(0, max(MIN_SPREAD, retry_after * RETRY_AFTER_SPREAD))


def next_wait(failures: int, retry_after: float | None, rng: random.Random | None = None) -> float:
    """Return the wait before the next try: the back-off, or when Retry-After asks for
    longer, Retry-After with jitter of its own (after_retry_after); never less than it."""
    wait = delay(failures, rng)
    if retry_after is None or wait >= retry_after:
        return wait
    return after_retry_after(retry_after, rng)
