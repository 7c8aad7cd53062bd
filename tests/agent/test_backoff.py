import random
from datetime import UTC, datetime

from receco_agent.backoff import (
    MAX_RETRY_AFTER,
    MAX_SECONDS,
    delay,
    next_wait,
    parse_retry_after,
)


def test_delay_doubles_with_jitter_in_the_upper_half():
    rng = random.Random(1)
    for failures, ceiling in [
        (1, 1),
        (2, 2),
        (3, 4),
        (4, 8),
        (6, 32),
        (9, 256),
        (10, 300),
        (50, 300),
    ]:
        waits = [delay(failures, rng) for _ in range(200)]
        assert min(waits) >= ceiling / 2
        assert max(waits) <= ceiling
        assert max(waits) - min(waits) > ceiling / 4  # jittered, not fixed
    assert delay(1000, rng) <= MAX_SECONDS


def test_retry_after_in_seconds():
    assert parse_retry_after("30") == 30.0
    assert parse_retry_after(" 0 ") == 0.0


def test_retry_after_as_http_date():
    now = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Sun, 22 Nov 2026 10:01:30 GMT", now=now) == 90.0
    assert parse_retry_after("Sun, 22 Nov 2026 09:00:00 GMT", now=now) == 0.0


def test_retry_after_garbage_or_absent_is_ignored_and_huge_is_capped():
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("999999") == MAX_RETRY_AFTER


def test_next_wait_never_undercuts_retry_after():
    rng = random.Random(2)
    assert next_wait(1, 45.0, rng) == 45.0
    assert 150 <= next_wait(10, 5.0, rng) <= 300
    assert 0.5 <= next_wait(1, None, rng) <= 1.0
