"""receco_agent.busy: when the service's answers hold a till's sales back, and for how long."""

import pytest
from receco_agent.busy import HOLD_SECONDS, MAX_HOLD_SECONDS, SLOW_SECONDS, Busy


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


def test_a_fast_answer_holds_nothing(clock):
    busy = Busy(clock)
    busy.heard(0.02, 200)
    assert not busy.holding()


@pytest.mark.parametrize("status", [429, 503])
def test_being_told_to_wait_holds_sales_for_the_retry_after(clock, status):
    busy = Busy(clock)
    busy.heard(0.01, status, retry_after=30.0)
    clock.now += 29.9
    assert busy.holding()
    clock.now += 0.2
    assert not busy.holding()


def test_a_short_or_missing_retry_after_still_holds_a_while(clock):
    busy = Busy(clock)
    busy.heard(0.01, 503, retry_after=None)
    clock.now += HOLD_SECONDS - 0.1
    assert busy.holding()
    clock.now += 0.2
    assert not busy.holding()


def test_a_retry_after_of_days_holds_sales_no_longer_than_the_cap(clock):
    busy = Busy(clock)
    busy.heard(0.01, 503, retry_after=86400.0)
    clock.now += MAX_HOLD_SECONDS + 0.1
    assert not busy.holding()


def test_a_slow_answer_holds_sales_a_while(clock):
    busy = Busy(clock)
    busy.heard(SLOW_SECONDS + 0.01, 200)
    assert busy.holding()
    clock.now += HOLD_SECONDS + 0.1
    assert not busy.holding()


def test_no_answer_at_all_is_the_back_offs_not_a_hold(clock):
    busy = Busy(clock)
    busy.heard(SLOW_SECONDS * 10, None)
    assert not busy.holding()


def test_a_later_fast_answer_does_not_cut_a_hold_short(clock):
    busy = Busy(clock)
    busy.heard(0.01, 503, retry_after=20.0)
    busy.heard(0.01, 200)
    clock.now += 10
    assert busy.holding()
