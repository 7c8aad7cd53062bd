"""Reads that a streaming replica may serve (DATABASE_REPLICA_URLS), with read-your-writes.

A replica lags its primary by a moment. A customer who scans the QR code a POS was just
given, or a POS that reads back what it just created, must still find the receipt: a
read that finds nothing on the replica is asked of the primary again. A row that was
changed (a sale voided or refunded, a receipt set aside, a contact attached) would be
found on the replica as it was: whoever changes one names it (``wrote``), and for
FRESH_SECONDS after the commit reads of that name go to the primary, in every process
(the names are kept in the shared cache). A replica that
fails (down, too slow) is left alone for REST_SECONDS, its reads going to the primary,
so that it costs one failed attempt per process, not one per request.

Only reads that change nothing and need nothing newer than what they find come here
(getReceipt, the receipt pages); everything that writes, or decides on what it reads,
reads the primary.
"""

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ObjectDoesNotExist
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from receco.lib import sharedcache

logger = logging.getLogger(__name__)

T = TypeVar("T")
REPLICAS = tuple(alias for alias in settings.DATABASES if alias.startswith("replica"))
REST_SECONDS = 5.0
# How long after a change its rows are read from the primary: longer than a healthy
# replica ever lags.
FRESH_SECONDS = 60
_resting_until: dict[str, float] = {}


def wrote(*names: str) -> None:
    """Note that the rows known by ``names`` (a receipt's token and short code) are being
    changed: once the transaction in progress commits (now, outside one), reads of them
    go to the primary for FRESH_SECONDS. Nothing to do without replicas."""
    if not REPLICAS:
        return
    marks = {_mark(name): 1 for name in names if name}
    transaction.on_commit(
        lambda: sharedcache.guarded("read-your-writes", lambda: cache.set_many(marks, FRESH_SECONDS), None),
        robust=True,
    )


def read(query: Callable[[str], T], name: str | None = None) -> T:
    """Return ``query(alias)`` run on a replica, or on the primary when no replica is
    configured or well, when the replica raises DoesNotExist (perhaps not replicated
    yet) or fails, or when the row ``name`` names was changed moments ago (``wrote``)."""
    alias = _pick()
    if alias is not None and name is not None and _changed_lately(name):
        alias = None
    if alias is not None:
        try:
            return query(alias)
        except ObjectDoesNotExist:
            pass
        except DatabaseError as exc:
            _resting_until[alias] = time.monotonic() + REST_SECONDS
            connections[alias].close()
            logger.warning(
                "read replica %s failed (%s); reading from the primary for %.0f s",
                alias,
                type(exc).__name__,
                REST_SECONDS,
            )
    return query(DEFAULT_DB_ALIAS)


def _mark(name: str) -> str:
    return f"written:{name}"


def _changed_lately(name: str) -> bool:
    # With the shared cache down nobody can say: the primary answers.
    return sharedcache.guarded("read-your-writes", lambda: cache.get(_mark(name)) is not None, True)


def _pick() -> str | None:
    if not REPLICAS:
        return None
    now = time.monotonic()
    well = [alias for alias in REPLICAS if _resting_until.get(alias, 0.0) <= now]
    return random.choice(well) if well else None
