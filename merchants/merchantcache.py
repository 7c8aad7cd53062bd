"""Merchants remembered by each process, under the shared version of merchants.keycache.

Every createReceiptFromPOS needs the sale's merchant (does it exist, require a key, is
it suspended?); reading it costs a query per call. Any saved or deleted merchant
replaces the shared version, which every procedure call reads when it is admitted
(merchants.access.admit); a merchant remembered under the version a call read is as
current as one read from the database. If the shared cache cannot say
(no version), the merchant is read from the database. As for keys, nothing is
remembered longer than keycache.MAX_AGE.

The Merchant objects are shared by the requests a process serves: read them, never
change them.
"""

import time
from collections.abc import Callable

from merchants import keycache
from merchants.models import Merchant

MAX_MERCHANTS = 10_000

# (field, value) -> (the Merchant, the version it was read under, when it was read).
_remembered: dict[tuple[str, object], tuple[Merchant, object, float]] = {}


def for_sale(string_id: str, display_name: str | None, version: object) -> Merchant:
    """``Merchant.objects.for_sale(string_id, display_name)``, remembered under ``version``
    (the one the call read before) and read again when that changed (a new, unsaved test
    merchant is never remembered).

    Raises Merchant.DoesNotExist (never remembered)."""
    return _recall(("string_id", string_id), version, lambda: Merchant.objects.for_sale(string_id, display_name))


def _recall(name: tuple[str, object], version: object, read: Callable[[], Merchant]) -> Merchant:
    entry = _remembered.get(name)
    now = time.monotonic()
    if version is not None and entry is not None and entry[1] == version and now - entry[2] <= keycache.MAX_AGE:
        return entry[0]
    found = read()
    if version is not None and found.pk is not None:  # a new test merchant is saved with its first receipt
        if len(_remembered) >= MAX_MERCHANTS:
            _remembered.clear()
        _remembered[name] = (found, version, now)
    return found


def forget() -> None:
    """Forget every remembered merchant (tests)."""
    _remembered.clear()
