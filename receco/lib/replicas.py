"""Reads that a streaming replica may serve (DATABASE_REPLICA_URLS), with read-your-writes.

A replica lags its primary by a moment. A customer who scans the QR code a POS was just
given, or a POS that reads back what it just created, must still find the receipt: a
read that finds nothing on the replica is asked of the primary again. A replica that
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
from django.core.exceptions import ObjectDoesNotExist
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger(__name__)

T = TypeVar("T")
REPLICAS = tuple(alias for alias in settings.DATABASES if alias.startswith("replica"))
REST_SECONDS = 5.0
_resting_until: dict[str, float] = {}


def read(query: Callable[[str], T]) -> T:
    """Return ``query(alias)`` run on a replica, or on the primary when no replica is
    configured or well, when the replica raises DoesNotExist (perhaps not replicated
    yet) or fails."""
    alias = _pick()
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


def _pick() -> str | None:
    if not REPLICAS:
        return None
    now = time.monotonic()
    well = [alias for alias in REPLICAS if _resting_until.get(alias, 0.0) <= now]
    return random.choice(well) if well else None
