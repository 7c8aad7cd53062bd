"""Retry timing: exponential back-off with jitter, and the service's Retry-After."""

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

BASE_SECONDS = 1.0
MAX_SECONDS = 300.0
# A Retry-After longer than this is treated as a mistake rather than obeyed for days.
MAX_RETRY_AFTER = 3600.0


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


def next_wait(failures: int, retry_after: float | None, rng: random.Random | None = None) -> float:
    """Return the wait before the next try: the back-off, but never less than Retry-After."""
    wait = delay(failures, rng)
    return max(wait, retry_after) if retry_after is not None else wait
