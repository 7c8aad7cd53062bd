"""Rate-limit policy (spec section 8, CONTRACT.md "Merchants, keys and who may do what").

- Live keys: RECECO_RATELIMIT_LIVE_KEY per key (1000 a minute and 100 a second).
- Test keys: not limited.
- Callers without a key: RECECO_RATELIMIT_ANONYMOUS per client address.
- Failed look-ups (a short code that names no receipt the caller may have):
  RECECO_RATELIMIT_FAILED_LOOKUPS per client address, so short codes cannot be
  enumerated; per address whatever keys are sent, so several keys do not multiply it.
- New ``test-`` merchants, which a sale creates on first use without any key:
  RECECO_RATELIMIT_TEST_MERCHANTS per client address.

django-ratelimit counts in the shared cache (Redis in production), so the limits hold
across every process and machine. If the cache is down the limits fail open.
"""

import functools
import hashlib
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.core.cache import caches
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django_ratelimit import ALL
from django_ratelimit import core as ratelimit_core
from django_ratelimit.core import get_usage
from redis.exceptions import NoScriptError

from merchants import sharedcache
from receco.errors import RateLimited

RATE_RE = re.compile(r"^(?P<limit>[1-9]\d*)/(?P<multiplier>[1-9]\d*)?(?P<unit>[smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WINDOW_NAMES = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}


@dataclass(frozen=True)
class Policy:
    """One limit: at most ``limit`` calls per ``window`` seconds."""

    rate: str  # django-ratelimit's notation, e.g. "1000/m"
    limit: int
    window: int

    @classmethod
    @functools.lru_cache(maxsize=64)  # read from the settings on every call
    def parse(cls, rate: str) -> "Policy":
        """Read ``1000/m``, ``100/s``, ``5000/h``, ``30/5m``; raise ValueError otherwise."""
        match = RATE_RE.match(rate.strip())
        if match is None:
            raise ValueError(f"{rate!r} is not a rate such as 1000/m, 100/s or 30/5m")
        window = int(match["multiplier"] or 1) * _UNIT_SECONDS[match["unit"]]
        return cls(rate.strip(), int(match["limit"]), window)

    @property
    def name(self) -> str:
        return _WINDOW_NAMES.get(self.window, f"{self.window}s")

    def describe(self) -> str:
        per = _WINDOW_NAMES.get(self.window, f"{self.window} seconds")
        return f"{self.limit} per {per}"


class Quota(NamedTuple):  # made for every call with a live key: a tuple is cheapest
    policy: Policy
    remaining: int
    reset: int  # seconds until the window ends


class RateState(NamedTuple):
    """Where a caller stands against each of its policies after a call."""

    quotas: tuple[Quota, ...]

    def headers(self) -> dict[str, str]:
        """RateLimit-Policy and RateLimit as in draft-ietf-httpapi-ratelimit-headers."""
        states = (f'"{q.policy.name}";r={q.remaining};t={q.reset}' for q in self.quotas)
        return {
            "RateLimit-Policy": _policy_header(tuple(q.policy.rate for q in self.quotas)),
            "RateLimit": ", ".join(states),
        }


@functools.lru_cache(maxsize=64)  # the same for every response to a key
def _policy_header(rates: tuple[str, ...]) -> str:
    policies = [Policy.parse(rate) for rate in rates]
    return ", ".join(f'"{policy.name}";q={policy.limit};w={policy.window}' for policy in policies)


class RateLimitExceeded(RateLimited):
    """A 429 that also says where the caller stands, for the RateLimit headers."""

    def __init__(self, message: str, retry_after: int, state: RateState | None):
        super().__init__(message, retry_after)
        self.state = state


def policies(setting: str) -> list[Policy]:
    return [Policy.parse(rate) for rate in getattr(settings, setting)]


def client_ip(request: HttpRequest) -> str:
    """The address limits count against: REMOTE_ADDR, or with RECECO_TRUSTED_PROXY_COUNT = N
    proxies in front, the address the outermost of them saw (N-th from the right in
    X-Forwarded-For; REMOTE_ADDR when that is missing or not an address). IPv6 addresses
    count per /64, which one subscriber usually holds."""
    candidates = []
    hops = settings.RECECO_TRUSTED_PROXY_COUNT
    if hops:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) >= hops:
            candidates.append(forwarded[-hops])
    candidates.append(request.META.get("REMOTE_ADDR") or "")
    for candidate in candidates:
        ip = _counted_address(candidate)
        if ip is not None:
            return ip
    # A Unix socket without a proxy header: every such caller shares one allowance.
    return "unknown"


@functools.lru_cache(maxsize=4096)  # the same few addresses call again and again
def _counted_address(text: str) -> str | None:
    """``text`` as the address limits count against (an IPv6 address's /64), or None."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
    return str(ip)


def _usage(group: str, identity: str, policy: Policy, increment: bool) -> dict | None:
    def count():
        return get_usage(None, group=group, key=lambda _g, _r: identity, rate=policy.rate, increment=increment)

    return sharedcache.guarded("rate limiting", count, None)


def _usages(
    counters: list[tuple[str, str, Policy, bool]],
    extra: Sequence[tuple[str, int]] = (),
    token: tuple[str, str] | None = None,
) -> tuple[list[dict], object] | None:
    """django-ratelimit's get_usage for each ``(group, identity, policy, increment)``, one
    added to each plain ``(name, timeout)`` counter of ``extra``, and the value of the
    ``token`` entry ``(name, value if missing)``: in one round trip when the cache is
    Redis. Returns the usages and the token's value; None when the cache is down."""
    redis = sharedcache.held_connection()
    if redis is None:
        results = [_usage(*counter) for counter in counters]
        for name, timeout in extra:
            sharedcache.guarded("usage counting", lambda n=name, t=timeout: sharedcache.increment(n, t), None)
        value = sharedcache.guarded("rate limiting", lambda: _cache_token(*token), None) if token else None
        return None if None in results else (results, value)
    return sharedcache.guarded("rate limiting", lambda: _redis_usages(redis, counters, extra, token), None)


def _cache_token(name: str, value: str) -> object:
    cache = caches["default"]
    cache.add(name, value, timeout=None)
    return cache.get(name)


# One command for all of a call's counters: fewer bytes to build, send and parse than a
# pipeline of commands, and as few calls inside Redis as the counts need (on a small
# machine Redis's CPU is the service's too). ARGV[1] says how many KEYS are counters,
# each with two more ARGV: its time to live, then 1 to add one or 0 to read it. Adding
# one to a missing counter creates it with its time to live, as django-ratelimit's
# add-then-incr does; a missing counter reads as 0. A key after the counters is a
# token: read, and set to the last ARGV if missing.
_COUNT_SCRIPT = """
local n = tonumber(ARGV[1])
local results = {}
for i = 1, n do
  if ARGV[2 * i + 1] == '1' then
    results[i] = redis.call('INCR', KEYS[i])
    if results[i] == 1 then
      redis.call('EXPIRE', KEYS[i], ARGV[2 * i])
    end
  else
    results[i] = tonumber(redis.call('GET', KEYS[i]) or 0)
  end
end
if #KEYS > n then
  local token = redis.call('GET', KEYS[n + 1])
  if not token then
    redis.call('SET', KEYS[n + 1], ARGV[2 * n + 2], 'NX')
    token = redis.call('GET', KEYS[n + 1])
  end
  results[n + 1] = token
end
return results
"""
_COUNT_SCRIPT_SHA = hashlib.sha1(_COUNT_SCRIPT.encode()).hexdigest()  # noqa: S324 (Redis names scripts so)


@functools.cache
def _key_settings() -> tuple[str, object]:
    # Settings that are usually unset, which Django looks for anew (and fails) each time.
    return getattr(settings, "RATELIMIT_CACHE_PREFIX", "rl:"), getattr(settings, "RATELIMIT_HASH_ALGORITHM", None)


@receiver(setting_changed)
def _forget_key_settings(setting, **kwargs):
    if setting.startswith("RATELIMIT_"):
        _key_settings.cache_clear()
        _counter_name.cache_clear()


def ratelimit_key(group: str, window: int, policy: Policy, identity: str) -> str:
    """django-ratelimit's cache key for a counter of all methods (its _make_cache_key),
    without reading its settings and parsing the rate again for every counter."""
    prefix, algorithm = _key_settings()
    if algorithm not in (None, hashlib.sha256):
        return ratelimit_core._make_cache_key(group, window, policy.rate, identity, ALL)
    text = f"{group}{policy.limit}/{policy.window}s{identity}{window}"
    return prefix + hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=4096)  # a counter is named anew once per window
def _counter_name(cache, group: str, window: int, rate: str, identity: str) -> str:
    """The name in ``cache`` of a counter: ratelimit_key, made into the cache's key."""
    return cache.make_key(ratelimit_key(group, window, Policy.parse(rate), identity))


def _redis_usages(redis: sharedcache.HeldConnection, counters, extra, token) -> tuple[list[dict], object]:
    """The same counters as get_usage (its cache keys, windows and expiry, and its counts:
    one added, made with its expiry if missing, or read, 0 if missing), in one script call."""
    cache = caches["default"]
    keys, args, windows = [], [str(len(counters) + len(extra))], []
    for group, identity, policy, increment in counters:
        window = ratelimit_core._get_window(identity, policy.window)
        keys.append(_counter_name(cache, group, window, policy.rate, identity))
        args += [str(policy.window + ratelimit_core.EXPIRATION_FUDGE), "1" if increment else "0"]
        windows.append(window)
    for name, timeout in extra:
        keys.append(cache.make_key(name))
        args += [str(timeout), "1"]
    if token:
        keys.append(cache.make_key(token[0]))
        args.append(token[1])
    try:
        results = redis.execute("EVALSHA", _COUNT_SCRIPT_SHA, str(len(keys)), *keys, *args)
    except NoScriptError:  # a Redis that has not seen the script yet (or was restarted)
        results = redis.execute("EVAL", _COUNT_SCRIPT, str(len(keys)), *keys, *args)
    now = int(ratelimit_core.time.time())
    usages = [
        {"count": count, "limit": policy.limit, "should_limit": count > policy.limit, "time_left": window - now}
        for (_, _, policy, _), count, window in zip(counters, results, windows, strict=False)
    ]
    return usages, results[-1] if token else None


def charge(caller) -> RateState | None:
    """Count one call of ``caller`` (a merchants.access.Caller) against its limits.

    Returns where a live key stands (None for test keys and callers without a key, or
    when the cache is down). Raises RateLimitExceeded when a limit is exceeded.
    """
    return charge_call(caller)[0]


def charge_call(
    caller, extra: Sequence[tuple[str, int]] = (), token: tuple[str, str] | None = None
) -> tuple[RateState | None, dict | None, object]:
    """``charge`` for a procedure call, in one round trip to the cache: also adds one to
    each ``(name, timeout)`` counter of ``extra``, reads the caller's failed look-ups and
    reads the ``token`` entry ``(name, value if missing)``.

    Returns the RateState, the failed look-ups' usage (for ``check_lookup_budget``) and
    the token's value; the last two are None when the cache is down. Raises
    RateLimitExceeded when a limit is exceeded.
    """
    key = caller.key
    if key is not None:
        group, identity, setting = "receco.key", key.lookup_id, "RECECO_RATELIMIT_LIVE_KEY"
        who = "for this API key"
    else:
        group, identity, setting = "receco.ip", caller.ip, "RECECO_RATELIMIT_ANONYMOUS"
        who = "from one address without an API key"
    counted = policies(setting) if key is None or key.is_live else []  # test keys are not limited
    lookups = Policy.parse(settings.RECECO_RATELIMIT_FAILED_LOOKUPS)
    counters = [(group, identity, policy, True) for policy in counted]
    counters.append(("receco.failed-lookups", _lookup_identity(caller), lookups, False))
    answer = _usages(counters, extra, token)
    if answer is None:
        return None, None, None
    usages, value = answer
    quotas, exceeded = [], None
    for policy, usage in zip(counted, usages, strict=False):
        reset = max(1, usage["time_left"])
        quotas.append(Quota(policy, max(0, usage["limit"] - usage["count"]), reset))
        if usage["should_limit"] and exceeded is None:
            exceeded = (policy, reset)
    # Only live keys' responses advertise their limits: an address's limit is a guard, not a quota.
    state = RateState(tuple(quotas)) if key is not None and key.is_live else None
    if exceeded is not None:
        policy, reset = exceeded
        raise RateLimitExceeded(f"Rate limit exceeded: at most {policy.describe()} {who}", reset, state)
    return state, usages[-1], value


def _lookup_identity(caller) -> str:
    return f"ip:{caller.ip}"


def check_lookup_budget(caller) -> None:
    """Raise RateLimited if ``caller`` has used up its failed look-ups for now (as read
    when the call was charged, if it was)."""
    policy = Policy.parse(settings.RECECO_RATELIMIT_FAILED_LOOKUPS)
    usage = caller.failed_lookups
    if usage is None:
        answer = _usages([("receco.failed-lookups", _lookup_identity(caller), policy, False)])
        usage = answer[0][0] if answer else None
    if usage is not None and usage["count"] >= usage["limit"]:
        raise RateLimited(
            f"Too many failed look-ups: at most {policy.describe()}; try again later", max(1, usage["time_left"])
        )


def record_failed_lookup(caller) -> None:
    policy = Policy.parse(settings.RECECO_RATELIMIT_FAILED_LOOKUPS)
    _usage("receco.failed-lookups", _lookup_identity(caller), policy, increment=True)


def charge_new_test_merchant(ip: str) -> None:
    """Count a ``test-`` merchant about to be created for a sale from ``ip``; raise
    RateLimited past RECECO_RATELIMIT_TEST_MERCHANTS (fails open with the cache)."""
    policy = Policy.parse(settings.RECECO_RATELIMIT_TEST_MERCHANTS)
    usage = _usage("receco.test-merchants", f"ip:{ip}", policy, increment=True)
    if usage is not None and usage["should_limit"]:
        raise RateLimited(
            f"Too many new test merchants: at most {policy.describe()} from one address; "
            "use a test- merchant id you have used before",
            max(1, usage["time_left"]),
        )
