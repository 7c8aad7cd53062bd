import random
from datetime import UTC, datetime

from receco_agent.backoff import (
    MAX_RETRY_AFTER,
    MAX_SECONDS,
    after_retry_after,
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


def test_next_wait_never_undercuts_retry_after_and_spreads_past_it():
    rng = random.Random(2)
    waits = [next_wait(1, 45.0, rng) for _ in range(200)]
    assert min(waits) >= 45.0
    assert max(waits) <= 45.0 + 22.5
    assert max(waits) - min(waits) > 10  # jittered, not all on the dot
    assert 150 <= next_wait(10, 5.0, rng) <= 300  # the back-off is longer: Retry-After adds nothing
    assert 0.5 <= next_wait(1, None, rng) <= 1.0


def test_fifty_tills_told_retry_after_1_come_back_spread_over_a_second():
    """The service answers a crowd turned away in one moment with one Retry-After (429 of a
    shared key, 503 of a database that stalls): the tills must not all come back together."""
    waits = sorted(next_wait(1, 1.0, random.Random(seed)) for seed in range(50))
    assert waits[0] >= 1.0
    assert waits[-1] <= 2.0
    # No tenth of a second holds more than a quarter of them.
    crowded = max(sum(start <= wait < start + 0.1 for wait in waits) for start in waits)
    assert crowded <= 12


def test_after_retry_after_spreads_over_half_of_it_and_a_second_at_least():
    rng = random.Random(3)
    long = [after_retry_after(30.0, rng) for _ in range(200)]
    short = [after_retry_after(0.0, rng) for _ in range(200)]
    assert min(long) >= 30.0
    assert max(long) <= 45.0
    assert max(long) - min(long) > 10
    assert min(short) >= 0.0
    assert max(short) <= 1.0
    assert max(short) - min(short) > 0.5
