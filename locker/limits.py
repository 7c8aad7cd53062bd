"""How often the locker may be asked for codes, links and downloads.

- From one client address: RECECO_LOCKER_ADDRESS_RATE sign-in requests, the sign-in
  form's limit, counted as every page form's is (receco.lib.formlimits).
- For one phone number or email address: RECECO_LOCKER_CONTACT_RATE codes and links, the
  contact's budget, spent only by a request that passed its address's limit (and, for a
  code, the texts budget): a request refused spends nothing of it, so nobody locks a
  stranger out by being refused in their name.
- For the whole service: RECECO_LOCKER_TEXT_RATE sign-in texts, each of which costs
  money. The outbox spends it as it sends a text (locker.transport); the form reads it
  and refuses codes while it is spent, for everyone alike.
- Downloads of everything (locker.export): RECECO_LOCKER_EXPORT_RATE per contact signed in.

Budgets are kept in admission's store (merchants.admission), which the task worker
counts in too, under names this module can make again: erasure deletes a contact's
(``forget``). A contact's counters are named by its keyed digest, never the contact.
Every request is counted whether or not any receipt was sent to the contact, so a
refusal reveals nothing either. With the cache down the limits fail open; the tries of
each code (locker.signins) are kept in the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.conf import settings
from django.http import HttpRequest

from locker.contacts import SMS, Contact
from merchants.admission import limits
from merchants.admission.limits import Window
from merchants.admission.store import store
from receco.errors import RateLimited
from receco.lib import formlimits, sharedcache
from receco.ops import metrics

ADDRESS = "locker.signin"  # the sign-in form's group in receco.lib.formlimits
CONTACT = "locker-contact"
EXPORT = "locker-export"
TEXTS = "locker-texts"
_SERVICE = "all"  # who the texts budget counts: everyone at once
_AGAIN = "Wait a while, then try again."


def charge(request: HttpRequest, contact: Contact, now: float | None = None) -> None:
    """Count one code or link asked for ``contact`` by ``request``'s client.

    Raises RateLimited, in a customer's words, for the first limit passed: the client
    address's, the service's texts (for a code), the contact's. Only a request that
    passed the first two spends the contact's budget."""
    refused = formlimits.refused(request, ADDRESS, settings.RECECO_LOCKER_ADDRESS_RATE)
    if refused is not None:
        metrics.rate_limit_refused("locker")
        raise RateLimited(
            f"Too many sign-in requests from your network: at most {refused.rate.describe()}. {_AGAIN}",
            refused.retry_after,
        )
    now = now or limits.clock()
    if contact.kind == SMS:
        texts = _texts(now, add=False)
        _refuse_past(texts, _counted(texts), _texts_spent, reached=True)
    what = "codes" if contact.kind == SMS else "sign-in links"
    budget = limits.windows(CONTACT, contact.digest, limits.rates("RECECO_LOCKER_CONTACT_RATE"), now)
    _refuse_past(
        budget, _counted(budget), lambda rate: f"Too many {what} asked for {contact.masked}: at most {rate}. {_AGAIN}"
    )


def spend_text(now: float | None = None) -> bool:
    """Count one sign-in text about to be sent; return False when that passes the
    service's texts budget (RECECO_LOCKER_TEXT_RATE). Fails open (True)."""
    texts = _texts(now or limits.clock(), add=True)
    values = _counted(texts)
    return values is None or all(value <= window.rate.limit for window, value in zip(texts, values, strict=True))


def charge_export(contact: Contact, now: float | None = None) -> None:
    """Count one download of everything sent to ``contact`` (RECECO_LOCKER_EXPORT_RATE per
    contact, named by its keyed digest). Raises RateLimited when the limit is passed."""
    counted = limits.windows(EXPORT, contact.digest, limits.rates("RECECO_LOCKER_EXPORT_RATE"), now or limits.clock())
    _refuse_past(
        counted, _counted(counted), lambda rate: f"Too many downloads of your receipts: at most {rate}. {_AGAIN}"
    )


def forget(contact: Contact, now: float | None = None) -> int:
    """Delete every counter named by ``contact`` (its codes and links, its downloads), as
    erasure does; return how many there were. Fails open: counters a cache outage left
    end with their windows, within a day."""
    now = now or limits.clock()
    names = set()
    for group, setting in ((CONTACT, "RECECO_LOCKER_CONTACT_RATE"), (EXPORT, "RECECO_LOCKER_EXPORT_RATE")):
        for rate in limits.rates(setting):
            # The window now and the one before: a counter outlives its window by a second.
            for at in (now, now - rate.window):
                names.update(window.count.name for window in limits.windows(group, contact.digest, [rate], at))
    return sharedcache.guarded("rate limiting", lambda: store().delete(sorted(names)), 0)


def _texts_spent(rate: str) -> str:
    return (
        f"Too many sign-in codes sent by text just now: at most {rate}, for everyone. "
        "Sign in with your email address, or wait a while, then try again."
    )


def _texts(now: float, *, add: bool) -> list[Window]:
    return limits.windows(TEXTS, _SERVICE, limits.rates("RECECO_LOCKER_TEXT_RATE"), now, add=add)


def _counted(counted: Sequence[Window]) -> list[int] | None:
    """The counters of ``counted`` once applied in the store; None when it cannot be reached."""
    answer = sharedcache.guarded("rate limiting", lambda: store().count([w.count for w in counted]), None)
    return None if answer is None else answer[0]


def _refuse_past(
    counted: Sequence[Window], values: list[int] | None, words: Callable[[str], str], *, reached: bool = False
) -> None:
    """Raise RateLimited with ``words`` of the rate (in words) for the first of ``counted``
    whose value passes its limit (``reached``: a value only read, at its limit, passes it);
    nothing when the values are not known."""
    for window, value in zip(counted, values or [], strict=False):
        if value > window.rate.limit or (reached and value >= window.rate.limit):
            metrics.rate_limit_refused("locker")
            raise RateLimited(words(window.rate.describe()), max(1, window.reset))
