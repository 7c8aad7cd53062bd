"""The failed-look-up budget: short codes can be guessed (6 characters), so the short
codes that find nothing count against the client address, RECECO_RATELIMIT_FAILED_LOOKUPS
of them per window, after which that address's short-code look-ups are refused until the
window ends. Per address, whatever keys a caller sends (several keys must not multiply
it), and never for full tokens, which cannot be guessed: one person's typos behind a
carrier's NAT must not lock a mall out of the receipts its QR codes hold.

The API reads the count in its admission's round trip; pages read it when they need it.
Fails open with Redis.
"""

from merchants.admission import limits
from merchants.admission.limits import Window, rates, windows
from merchants.admission.store import store
from receco.errors import RateLimited
from receco.lib import sharedcache
from receco.ops import metrics

FAILED_LOOKUPS = "failed-lookups"


def window(ip: str, now: float | None = None, *, add: bool = False) -> Window:
    """The address's current window of failed look-ups (its counter read, or added to)."""
    (found,) = windows(FAILED_LOOKUPS, ip, rates("RECECO_RATELIMIT_FAILED_LOOKUPS"), now or limits.clock(), add=add)
    return found


def check(ip: str, spent: int | None = None, now: float | None = None) -> None:
    """Raise RateLimited if ``ip`` has used up its failed look-ups: ``spent`` as read in the
    call's admission, or read now when not known."""
    current = window(ip, now)
    if spent is None:
        answer = sharedcache.guarded("rate limiting", lambda: store().count([current.count]), None)
        if answer is None:
            return
        spent = answer[0][0]
    if spent >= current.rate.limit:
        metrics.rate_limit_refused("failed_lookups")
        message = f"Too many failed look-ups: at most {current.rate.describe()}; try again later"
        raise RateLimited(message, max(1, current.reset))


def spent(ip: str, count: int | None, now: float | None = None) -> bool:
    """Whether ``count`` failed look-ups (as an admission read them; None: not known, so
    not spent) use up ``ip``'s budget."""
    return count is not None and count >= window(ip, now).rate.limit


def record(ip: str, now: float | None = None) -> None:
    """Count one short code of ``ip`` that found nothing."""
    current = window(ip, now, add=True)
    sharedcache.guarded("rate limiting", lambda: store().count([current.count]), None)
