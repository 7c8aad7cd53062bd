"""How often codes and links may be asked for: RECECO_LOCKER_CONTACT_RATE per phone number
or email address, and RECECO_LOCKER_ADDRESS_RATE per client address, counted in the
shared cache by admission's fixed windows (merchants.admission). Counters are named by a
keyed digest of the contact, never the contact. Both count every request, whether or not
any receipt was sent to the contact, so a refusal reveals nothing either. With the cache
down they fail open; the tries of each code (locker.signins) are kept in the database.

Downloads of everything (locker.export) are counted the same way, RECECO_LOCKER_EXPORT_RATE
per contact signed in."""

from __future__ import annotations

from locker.contacts import SMS, Contact
from merchants.admission import limits
from merchants.admission.store import store
from receco.errors import RateLimited
from receco.lib import sharedcache
from receco.ops import metrics

CONTACT = "locker-contact"
ADDRESS = "locker-address"
EXPORT = "locker-export"


def charge(contact: Contact, ip: str, now: float | None = None) -> None:
    """Count one code or link asked for ``contact`` from ``ip``.

    Raises RateLimited, in a customer's words, when either limit is passed (the address's
    first)."""
    now = now or limits.clock()
    by_address = limits.windows(ADDRESS, ip, limits.rates("RECECO_LOCKER_ADDRESS_RATE"), now)
    by_contact = limits.windows(CONTACT, contact.digest, limits.rates("RECECO_LOCKER_CONTACT_RATE"), now)
    counted = [*by_address, *by_contact]
    answer = sharedcache.guarded("rate limiting", lambda: store().count([w.count for w in counted]), None)
    if answer is None:
        return
    values = answer[0]
    for index, (window, value) in enumerate(zip(counted, values, strict=True)):
        if value <= window.rate.limit:
            continue
        metrics.rate_limit_refused("locker")
        if index < len(by_address):
            message = f"Too many sign-in requests from your network: at most {window.rate.describe()}."
        else:
            what = "codes" if contact.kind == SMS else "sign-in links"
            message = f"Too many {what} asked for {contact.masked}: at most {window.rate.describe()}."
        raise RateLimited(f"{message} Wait a while, then try again.", max(1, window.reset))


def charge_export(contact: Contact, now: float | None = None) -> None:
    """Count one download of everything sent to ``contact`` (RECECO_LOCKER_EXPORT_RATE per
    contact, named by its keyed digest). Raises RateLimited when the limit is passed."""
    now = now or limits.clock()
    counted = limits.windows(EXPORT, contact.digest, limits.rates("RECECO_LOCKER_EXPORT_RATE"), now)
    answer = sharedcache.guarded("rate limiting", lambda: store().count([w.count for w in counted]), None)
    if answer is None:
        return
    for window, value in zip(counted, answer[0], strict=True):
        if value > window.rate.limit:
            metrics.rate_limit_refused("locker")
            raise RateLimited(
                f"Too many downloads of your receipts: at most {window.rate.describe()}. Wait a while, then try again.",
                max(1, window.reset),
            )
