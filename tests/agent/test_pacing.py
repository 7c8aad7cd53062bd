"""The agent's pacing by the service's rate limits (receco_agent.pacing), on a simulated clock:
a service that counts calls in fixed windows as the real one does (merchants.admission.limits),
a link with a round trip that varies, and the forwarder's way of sending batches."""

import heapq
import itertools
import math
import random

import pytest
from receco_agent.pacing import Limit, Pacer, parse_limits

SERVICE_HEADERS = {
    "RateLimit-Policy": '"minute";q=1000;w=60, "second";q=100;w=1',
    "RateLimit": '"minute";r=950;t=37, "second";r=0;t=1',
}


def test_the_services_headers_are_read():
    assert parse_limits(SERVICE_HEADERS) == (Limit("minute", 950, 37.0, 1000, 60), Limit("second", 0, 1.0, 100, 1))
    lowercase = {name.lower(): value for name, value in SERVICE_HEADERS.items()}
    assert parse_limits(lowercase) == parse_limits(SERVICE_HEADERS)


@pytest.mark.parametrize(
    "headers",
    [{}, {"RateLimit": "garbage"}, {"RateLimit": '"minute";r=x;t=1'}, {"RateLimit": '"minute";q=5'}],
)
def test_answers_without_readable_limits_state_none(headers):
    assert parse_limits(headers) == ()


def test_a_limit_without_its_policy_has_no_quota():
    assert parse_limits({"RateLimit": "default;r=5;t=30"}) == (Limit("default", 5, 30.0),)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_one_call_at_a_time_until_the_service_has_answered():
    clock = Clock()
    pacer = Pacer(clock)
    assert pacer.grant(50) == (1, 0.0)
    assert pacer.grant(50) == (0, None)  # until that call is answered
    pacer.heard(1, None)  # no answer: still nothing known
    assert pacer.grant(50) == (1, 0.0)
    pacer.heard(1, ())  # an answer without limits (a test key): not paced
    assert pacer.grant(50) == (50, 0.0)
    assert pacer.grant(50) == (50, 0.0)
    assert pacer.status() is None


def test_calls_in_flight_and_the_latest_answers_bound_what_may_go():
    clock = Clock()
    pacer = Pacer(clock)
    pacer.heard(0, parse_limits(SERVICE_HEADERS | {"RateLimit": '"minute";r=999;t=37, "second";r=99;t=1'}))
    assert pacer.grant(50) == (50, 0.0)
    assert pacer.grant(50) == (49, 0.0)  # 99 remain in this second
    assert pacer.grant(50) == (0, 1.0)  # until the second's bound passes (or an answer comes)
    pacer.heard(50, parse_limits(SERVICE_HEADERS | {"RateLimit": '"minute";r=949;t=37, "second";r=49;t=1'}))
    assert pacer.grant(50) == (0, 1.0)  # 49 remain, all taken by the 49 in flight
    clock.now = 0.5
    pacer.heard(49, parse_limits(SERVICE_HEADERS | {"RateLimit": '"minute";r=900;t=36, "second";r=0;t=1'}))
    assert pacer.grant(50) == (0, pytest.approx(0.5))
    assert pacer.status() == {
        "wait_seconds": 0.5,
        "limits": [
            {"name": "minute", "quota": 1000, "window": 60, "remaining": 900},
            {"name": "second", "quota": 100, "window": 1, "remaining": 0},
        ],
        "refused": 0,
    }
    clock.now = 1.5  # every bound of the second has passed: a new second has its whole quota
    assert pacer.grant(100) == (100, 0.0)


def test_the_window_of_a_spent_quota_is_waited_out():
    clock = Clock()
    pacer = Pacer(clock)
    pacer.heard(0, parse_limits(SERVICE_HEADERS | {"RateLimit": '"minute";r=0;t=37, "second";r=99;t=1'}))
    assert pacer.grant(50) == (0, 37.0)
    clock.now = 36.9
    assert pacer.grant(50) == (0, pytest.approx(0.1))
    clock.now = 37.0
    assert pacer.grant(50) == (50, 0.0)


def test_a_refusal_holds_every_call_for_its_retry_after_and_a_random_moment_more():
    clock = Clock()
    pacer = Pacer(clock, rng=random.Random(5))
    pacer.heard(0, ())
    assert pacer.grant(50) == (50, 0.0)
    pacer.heard(50, (), refused=50, retry_after=30.0)  # e.g. a keyless agent's limit, without headers
    granted, wait = pacer.grant(50)
    assert granted == 0
    assert 30.0 <= wait <= 45.0
    assert pacer.status() == {"wait_seconds": round(wait, 1), "limits": [], "refused": 50}
    clock.now = 30.0
    assert pacer.grant(50)[0] == 0  # not on the dot
    clock.now = wait
    assert pacer.grant(50) == (50, 0.0)


def test_tills_refused_together_are_let_go_apart():
    """Five tills sharing a key, refused in the same second: each pacer holds its calls for
    Retry-After and a moment of its own, so they do not all call again at once."""
    holds = []
    for seed in range(5):
        pacer = Pacer(Clock(), rng=random.Random(seed))
        pacer.heard(0, ())
        pacer.grant(50)
        pacer.heard(50, (), refused=50, retry_after=1.0)
        holds.append(pacer.grant(50)[1])
    assert all(1.0 <= hold <= 2.0 for hold in holds)
    assert max(holds) - min(holds) > 0.5


class Service:
    """Counts every call in fixed windows of its own clock, as merchants.admission.limits does
    (a refused call counts too), and answers the RateLimit headers it would send."""

    def __init__(self, rates: list[tuple[str, int, int]], clock_offset: float):
        self.rates = rates
        self.offset = clock_offset
        self.counts: dict[tuple[str, int], int] = {}
        self.refused = 0

    def call(self, at: float) -> bool:
        second = int(at + self.offset)
        allowed = True
        for name, quota, window in self.rates:
            key = (name, second // window)
            self.counts[key] = self.counts.get(key, 0) + 1
            allowed = allowed and self.counts[key] <= quota
        self.refused += not allowed
        return allowed

    def headers(self, at: float) -> dict[str, str]:
        second = int(at + self.offset)
        policy = ", ".join(f'"{name}";q={quota};w={window}' for name, quota, window in self.rates)
        states = []
        for name, quota, window in self.rates:
            index = second // window
            remaining = max(0, quota - self.counts.get((name, index), 0))
            states.append(f'"{name}";r={remaining};t={(index + 1) * window - second}')
        return {"RateLimit-Policy": policy, "RateLimit": ", ".join(states)}


def drain(rows: int, service: Service, rng: random.Random, in_flight: int = 4, batch: int = 50) -> float:
    """Send ``rows`` calls as the forwarder does (batches, requests in flight, each granted by
    the pacer) over a link of 20 to 200 ms one way; return the simulated time it took."""
    clock = Clock()
    pacer = Pacer(clock)
    events: list[tuple[float, int, str, int, object]] = []  # (time, order, kind, calls, answer)
    left, outstanding, wake_at = rows, 0, math.inf
    order = itertools.count()

    def schedule(at: float, kind: str, calls: int = 0, answer: object = None) -> None:
        heapq.heappush(events, (at, next(order), kind, calls, answer))

    def top_up() -> None:
        nonlocal left, outstanding, wake_at
        while outstanding < in_flight and left > 0:
            granted, wait = pacer.grant(min(batch, left))
            if not granted:
                if wait and clock.now + wait < wake_at:
                    wake_at = clock.now + wait
                    schedule(wake_at, "wake")
                return
            left -= granted
            outstanding += 1
            schedule(clock.now + rng.uniform(0.02, 0.2), "arrive", granted)

    top_up()
    while left > 0 or outstanding:
        clock.now, _, kind, calls, answer = heapq.heappop(events)
        if kind == "arrive":  # the service counts each call of the batch in turn, 2 ms each
            refused = sum(not service.call(clock.now + number * 0.002) for number in range(calls))
            answered = clock.now + calls * 0.002
            schedule(answered + rng.uniform(0.02, 0.2), "answer", calls, (service.headers(answered), refused))
            continue
        if kind == "answer":
            headers, refused = answer
            pacer.heard(calls, parse_limits(headers), refused=refused, retry_after=1.0 if refused else None)
            outstanding -= 1
            left += refused  # a refused call is sent again
        else:  # "wake"
            wake_at = math.inf
        top_up()
    return clock.now


@pytest.mark.parametrize("seed", range(12))
def test_a_backlog_drains_under_the_default_limits_without_a_refusal(seed):
    rng = random.Random(seed)
    service = Service([("minute", 1000, 60), ("second", 100, 1)], clock_offset=rng.uniform(0, 3600))
    took = drain(3000, service, rng)
    assert service.refused == 0
    # Three windows of a minute hold 3,000 calls: the first ends within a minute of the
    # start, and a window's 1,000 calls take under 20 s at 100 a second.
    assert took < 60 + 60 + 20


@pytest.mark.parametrize("seed", range(4))
def test_small_windows_and_quotas_below_a_batch_are_kept_too(seed):
    rng = random.Random(seed)
    service = Service([("5s", 30, 5), ("second", 8, 1)], clock_offset=rng.uniform(0, 3600))
    took = drain(200, service, rng)
    assert service.refused == 0
    assert took < 200 / 30 * 5 + 10
