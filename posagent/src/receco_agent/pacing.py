"""Pacing the calls to the service by the rate limits it advertises, so that a backlog is
uploaded as fast as they allow, with almost no call refused (429).

The service answers every call made with a live key with the headers of
draft-ietf-httpapi-ratelimit-headers::

    RateLimit-Policy: "minute";q=1000;w=60, "second";q=100;w=1
    RateLimit: "minute";r=950;t=37, "second";r=50;t=1

(``r`` calls remain in the window of each policy, which ends within ``t`` seconds), and
a refused call with ``Retry-After``. Every call of a batch counts. The pacer grants each
request the calls it may carry now, and learns from every answer:

- an answer received at ``now`` says its window ends by ``now + t`` at the latest (the
  service rounds its clock down to the second); until then at most ``r`` calls remain in
  it, fewer by the calls still in flight, which may be counted in it too;
- once every such bound has passed, the windows that counted the calls answered have
  ended, and a new window has the policy's whole quota ``q``, less the calls in flight.

So the pacer never counts on a window before it has surely begun, whatever the clocks and
the round trip: a call is refused only when something else uses the same key (another till)
or the limits change. Until the first answer it lets one call go at a time (a service
that sends no such headers, as with a test key, is not paced). A 429 holds every call
back for its ``Retry-After``, and a moment more at random (backoff.after_retry_after), so
that tills sharing a key, all refused together, do not all come back together. Times are
the monotonic clock's.
"""

import math
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from receco_agent.backoff import after_retry_after

# A call at a time until the service answered once: its limits are not known yet.
FIRST_CALLS = 1
# The wait reported when no bound is known but nothing is in flight either (not expected).
_FALLBACK_WAIT = 1.0
_ITEM = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.*-]+)((?:\s*;\s*[A-Za-z0-9_.*-]+\s*=\s*[^;,]*)*)\s*(?:,|$)')
_PARAMETER = re.compile(r";\s*([A-Za-z0-9_.*-]+)\s*=\s*([^;,]*)")


@dataclass(frozen=True)
class Limit:
    """Where the caller stands against one policy, as one answer said."""

    name: str
    remaining: int
    reset: float  # seconds until the window ends, at the latest
    quota: int | None = None  # calls a window allows (RateLimit-Policy's q)
    window: int | None = None  # seconds (RateLimit-Policy's w)


def _items(value: str | None) -> dict[str, dict[str, str]]:
    """The members of a structured-field list, ``"name";a=1;b=2, ...``, by name."""
    found: dict[str, dict[str, str]] = {}
    if not value:
        return found
    position = 0
    while position < len(value):
        match = _ITEM.match(value, position)
        if match is None or match.end() == position:
            break
        position = match.end()
        found[match.group(1).strip('"')] = {k.lower(): v.strip() for k, v in _PARAMETER.findall(match.group(2))}
    return found


def _integer(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def parse_limits(headers: Mapping[str, str]) -> tuple[Limit, ...]:
    """Return the limits the ``RateLimit`` and ``RateLimit-Policy`` headers of an answer
    state (none when it has no such headers, or they cannot be read)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    policies = _items(lowered.get("ratelimit-policy"))
    limits = []
    for name, parameters in _items(lowered.get("ratelimit")).items():
        remaining, reset = _integer(parameters.get("r")), _integer(parameters.get("t"))
        if remaining is None or reset is None:
            continue
        policy = policies.get(name, {})
        limits.append(Limit(name, remaining, float(reset), _integer(policy.get("q")), _integer(policy.get("w"))))
    return tuple(limits)


@dataclass
class _Policy:
    name: str
    quota: int | None = None
    window: int | None = None
    # (monotonic time by which the window ends, calls remaining in it), one per answer
    # whose bound has not passed yet.
    bounds: list[tuple[float, int]] = field(default_factory=list)


class Pacer:
    """The calls that may go to the service now; shared by the threads that call it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, rng: random.Random | None = None):
        self._clock = clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._answered = False
        self._policies: dict[str, _Policy] = {}
        self._held_until = 0.0
        self.refused = 0  # calls the service refused with 429 since the agent started

    def grant(self, wanted: int) -> tuple[int, float | None]:
        """Reserve up to ``wanted`` calls for a request to send now.

        Returns (calls granted, 0.0), or (0, seconds) when none may go for that long, or
        (0, None) when none may go until a request in flight is answered. Every call
        granted is given back through heard() or unused().
        """
        with self._lock:
            now = self._clock()
            if now < self._held_until:
                return 0, self._held_until - now
            if not self._answered:
                if self._in_flight:
                    return 0, None
                allowed, wait = FIRST_CALLS, None
            else:
                allowed, wait = self._allowance(now)
            if allowed <= 0:
                if wait is None and not self._in_flight:
                    wait = _FALLBACK_WAIT
                return 0, wait
            granted = min(wanted, allowed)
            self._in_flight += granted
            return granted, 0.0

    def unused(self, calls: int) -> None:
        """Give back ``calls`` granted but not sent."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - calls)

    def heard(
        self, calls: int, limits: tuple[Limit, ...] | None, refused: int = 0, retry_after: float | None = None
    ) -> None:
        """Record the answer to a request of ``calls`` granted calls.

        ``limits`` are the answer's (parse_limits), or None when no HTTP answer came (the
        calls may still have been counted: that is left to the bounds of later answers);
        ``refused`` calls of it were answered 429, with ``retry_after`` seconds: no call
        goes before then, nor for a random moment after (backoff.after_retry_after).
        """
        with self._lock:
            now = self._clock()
            self._in_flight = max(0, self._in_flight - calls)
            if limits is None:
                return
            self._answered = True
            for limit in limits:
                policy = self._policies.setdefault(limit.name, _Policy(limit.name))
                if limit.quota is not None:
                    policy.quota, policy.window = limit.quota, limit.window
                policy.bounds.append((now + limit.reset, limit.remaining))
            if refused:
                self.refused += refused
                if retry_after:
                    self._held_until = max(self._held_until, now + after_retry_after(retry_after, self._rng))

    def _allowance(self, now: float) -> tuple[float, float | None]:
        """(calls that may go now, seconds until that may grow) by every known policy."""
        allowed, wait = math.inf, None
        for policy in self._policies.values():
            policy.bounds = [bound for bound in policy.bounds if bound[0] > now]
            if policy.bounds:
                base = min(remaining for _, remaining in policy.bounds)
                grows_at = min(at for at, _ in policy.bounds)
            elif policy.quota is not None:
                base, grows_at = policy.quota, None
            else:  # a window passed and its quota was never said: one request at a time
                base, grows_at = (FIRST_CALLS if not self._in_flight else 0), None
            available = base - self._in_flight
            allowed = min(allowed, available)
            if available <= 0 and grows_at is not None:
                wait = grows_at - now if wait is None else min(wait, grows_at - now)
        return allowed, wait

    def status(self) -> dict | None:
        """Return what the service's limits hold back, for ``status``: None when it states
        none, else ``{"wait_seconds", "limits": [{name, quota, window, remaining}], "refused"}``
        (``wait_seconds``: until the next call may go, 0 when one may go now)."""
        with self._lock:
            now = self._clock()
            waiting = max(0.0, self._held_until - now)
            if not self._policies and not waiting and not self.refused:
                return None
            if not waiting and self._answered:
                allowed, wait = self._allowance(now)
                if allowed <= 0 and wait:
                    waiting = wait
            limits = [
                {
                    "name": policy.name,
                    "quota": policy.quota,
                    "window": policy.window,
                    "remaining": min((remaining for _, remaining in policy.bounds), default=policy.quota),
                }
                for policy in self._policies.values()
            ]
            return {"wait_seconds": round(waiting, 1), "limits": limits, "refused": self.refused}
