"""How often one client address may post a page form: the limit of every form a person
fills in (the receipt page's send form, wallet passes, password reset, the locker's
sign-in, the two-step set-up's email, counted by its user) and of the providers'
callbacks, counted by django-ratelimit in the shared cache, one counter per form (its
``group``), rate and address.

The API never comes here: admission counts its calls, and keeps the budgets (what a
key, a contact or the whole service may spend) in a store whose counters it can name
again (merchants.admission). docs/architecture.md says which limiter counts what.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.http import HttpRequest
from django_ratelimit.core import get_usage

from receco.lib import sharedcache
from receco.lib.addresses import client_ip
from receco.lib.rates import Rate, parse_rate


@dataclass(frozen=True)
class Refused:
    """A post over its form's limit: the rate it passed and the seconds until its window ends."""

    rate: Rate
    retry_after: int


def refused(request: HttpRequest, group: str, rates: str | Sequence[str], *, who: str | None = None) -> Refused | None:
    """Count one post of the form ``group`` from the request's client address (or from
    ``who``, a signed-in user's own name for the count) against each of ``rates``
    (``"10/h"``, or a list of them); return the first rate it passed, or None.

    Fails open: None when the shared cache cannot be reached (receco.lib.sharedcache logs
    it), so that a cache outage never keeps a customer from a form."""
    name = who if who is not None else client_ip(request)
    texts = [rates] if isinstance(rates, str) else list(rates)

    def count() -> Refused | None:
        passed = None
        for text in texts:
            usage = get_usage(request, group=group, key=lambda _group, _request: name, rate=text, increment=True)
            if passed is None and usage is not None and usage["should_limit"]:
                passed = Refused(parse_rate(text), max(1, usage["time_left"]))
        return passed

    return sharedcache.guarded("rate limiting", count, None)
