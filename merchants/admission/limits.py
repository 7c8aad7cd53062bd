"""The limits calls are held to, counted in fixed windows (merchants.admission.store).

- Live keys: RECECO_RATELIMIT_LIVE_KEY per key.
- Test keys: not limited.
- Calls without a key, and with a key that fails: RECECO_RATELIMIT_ANONYMOUS per client address.
- New ``test-`` merchants, which a sale creates on first use without any key:
  RECECO_RATELIMIT_TEST_MERCHANTS per client address.
- Short codes that find nothing: merchants.admission.budget.

A window of ``w`` seconds is the ``now // w``-th since the epoch; its counter lives until
the window ends. Counters are named by a digest of who is counted, so no address or key
id is written in Redis. If Redis is down the limits fail open.
"""

import functools
import hashlib
import time
from collections.abc import Sequence
from typing import NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from merchants.admission.store import Count, store
from receco.errors import RateLimited
from receco.lib import sharedcache
from receco.lib.rates import Rate, parse_rate
from receco.ops import metrics

LIVE_KEY = "key"
ANONYMOUS = "ip"
TEST_MERCHANTS = "test-merchants"

# Where windows take the time from: seconds since the epoch (tests hold it still).
clock = time.time


class Window(NamedTuple):
    """The counter of one rate's current window for one caller."""

    rate: Rate
    count: Count
    reset: int  # seconds until the window ends


class Quota(NamedTuple):  # made for every call with a live key: a tuple is cheapest
    rate: Rate
    remaining: int
    reset: int


class RateState(NamedTuple):
    """Where a live key stands against each of its limits after a call."""

    quotas: tuple[Quota, ...]

    def headers(self) -> dict[str, str]:
        """RateLimit-Policy and RateLimit as in draft-ietf-httpapi-ratelimit-headers."""
        states = (f'"{q.rate.name}";r={q.remaining};t={q.reset}' for q in self.quotas)
        return {
            "RateLimit-Policy": _policy_header(tuple(q.rate.text for q in self.quotas)),
            "RateLimit": ", ".join(states),
        }


@functools.lru_cache(maxsize=64)  # the same for every response to a key; keyed by text, quick to hash
def _policy_header(rates: tuple[str, ...]) -> str:
    return ", ".join(f'"{rate.name}";q={rate.limit};w={rate.window}' for rate in map(parse_rate, rates))


class RateLimitExceeded(RateLimited):
    """A 429 that also says where a live key stands, for the RateLimit headers."""

    def __init__(self, message: str, retry_after: int, state: RateState | None):
        super().__init__(message, retry_after)
        self.state = state


def rates(setting: str) -> tuple[Rate, ...]:
    """The rates of a setting (one rate, or a list of them)."""
    found = _rates.get(setting)
    if found is None:
        value = getattr(settings, setting)
        found = _rates[setting] = _parsed((value,) if isinstance(value, str) else tuple(value))
    return found


_rates: dict[str, tuple[Rate, ...]] = {}  # read for every call; by setting, until a setting changes


@receiver(setting_changed)
def _forget_rates(setting, **kwargs):
    _rates.pop(setting, None)


# Every limit a caller of the API is held to, by the setting that declares it, and what it
# counts, in the words the OpenAPI document states them in (docs/ are held to the same
# settings by tests/docs/test_limits.py). The settings are the one declaration.
DECLARED = (
    ("RECECO_RATELIMIT_LIVE_KEY", "live keys", "per key"),
    ("RECECO_RATELIMIT_ANONYMOUS", "calls without a key", "per client address"),
    ("RECECO_RATELIMIT_FAILED_LOOKUPS", "short codes that find nothing", "per client address"),
    ("RECECO_RATELIMIT_TEST_MERCHANTS", "new test- merchants", "per client address"),
)


def in_words(setting: str) -> str:
    """A setting's rates as a sentence says them: ``1000 per minute and 100 per second``."""
    return " and ".join(rate.describe() for rate in rates(setting))


def summary() -> str:
    """Every limit of DECLARED in words, as the settings now say, test keys' included:
    ``live keys 1000 per minute and 100 per second per key, test keys unlimited, …``."""
    parts = [f"{what} {in_words(setting)} {per}" for setting, what, per in DECLARED]
    parts.insert(1, "test keys unlimited")
    return ", ".join(parts)


def current() -> tuple:
    """The settings of DECLARED as they are now, as a key for what is made from them."""
    return tuple(tuple(rate.text for rate in rates(setting)) for setting, _, _ in DECLARED)


def policy_header(setting: str = "RECECO_RATELIMIT_LIVE_KEY") -> str:
    """The RateLimit-Policy header a live key's answers carry: ``"minute";q=1000;w=60, …``."""
    return _policy_header(tuple(rate.text for rate in rates(setting)))


@functools.lru_cache(maxsize=64)  # read for every call
def _parsed(texts: tuple[str, ...]) -> tuple[Rate, ...]:
    return tuple(parse_rate(text) for text in texts)


def windows(group: str, identity: str, counted: Sequence[Rate], now: float, *, add: bool = True) -> list[Window]:
    """The current window of each rate for ``identity`` in ``group``."""
    second = int(now)
    found = []
    for rate in counted:
        index = second // rate.window
        reset = (index + 1) * rate.window - second
        found.append(Window(rate, Count(_name(group, identity, rate.window, index), reset + 1, add), reset))
    return found


@functools.lru_cache(maxsize=4096)  # a counter is named anew once per window
def _name(group: str, identity: str, window: int, index: int) -> str:
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return f"rl:{group}:{digest}:{window}:{index}"


def judge(counted: Sequence[Window], values: Sequence[int], who: str, *, advertise: bool) -> RateState | None:
    """Where a caller stands after its call was counted in ``counted`` (whose counters now
    hold ``values``); the state only when it is ``advertise``d (live keys').

    Raises RateLimitExceeded, naming the first limit passed and ``who`` was counted."""
    exceeded = None
    for window, value in zip(counted, values, strict=False):
        if value > window.rate.limit:
            exceeded = window
            break
    state = None
    if advertise:
        pairs = zip(counted, values, strict=False)
        state = RateState(tuple(Quota(w.rate, max(0, w.rate.limit - value), w.reset) for w, value in pairs))
    if exceeded is not None:
        metrics.rate_limit_refused("anonymous" if who == ANONYMOUS_WHO else "live_key")
        message = f"Rate limit exceeded: at most {exceeded.rate.describe()} {who}"
        raise RateLimitExceeded(message, max(1, exceeded.reset), state)
    return state


ANONYMOUS_WHO = "from one address without an API key"


def charge_anonymous(ip: str, now: float | None = None) -> None:
    """Count one call of ``ip`` against the limits of calls without a key (a key that
    failed counts so: keys cannot be guessed faster than anyone may call). Raises
    RateLimitExceeded; fails open."""
    counted = windows(ANONYMOUS, ip, rates("RECECO_RATELIMIT_ANONYMOUS"), now or clock())
    answer = sharedcache.guarded("rate limiting", lambda: store().count([w.count for w in counted]), None)
    if answer is not None:
        judge(counted, answer[0], ANONYMOUS_WHO, advertise=False)


def charge_new_test_merchant(ip: str, now: float | None = None) -> None:
    """Count a ``test-`` merchant about to be created for a sale from ``ip``; raise
    RateLimited past RECECO_RATELIMIT_TEST_MERCHANTS. Fails open."""
    (window,) = windows(TEST_MERCHANTS, ip, rates("RECECO_RATELIMIT_TEST_MERCHANTS"), now or clock())
    answer = sharedcache.guarded("rate limiting", lambda: store().count([window.count]), None)
    if answer is not None and answer[0][0] > window.rate.limit:
        metrics.rate_limit_refused("test_merchants")
        raise RateLimited(
            f"Too many new test merchants: at most {window.rate.describe()} from one address; "
            "use a test- merchant id you have used before",
            max(1, window.reset),
        )
