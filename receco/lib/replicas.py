"""Reads that a streaming replica may serve (DATABASE_REPLICA_URLS), with read-your-writes.

A replica lags its primary by a moment. A customer who scans the QR code a POS was just
given, or a POS that reads back what it just created, must still find the receipt: a
read that finds nothing on the replica is asked of the primary again. A row that was
changed (a sale voided or refunded, a receipt set aside, a contact attached) would be
found on the replica as it was: whoever changes one names it (``wrote``), and for
FRESH_SECONDS after the commit reads of that name go to the primary, in every process
(the names are kept in the shared cache).

A replica is optional for every read here (the primary can answer), so it gets little
time: DATABASE_REPLICA_TIMEOUT seconds to connect and to answer. One that fails (down,
hung, too slow) is marked down, in this process and in Redis for the other processes,
and its reads go to the primary until it answers a health check again: a thread of
this process probes it every PROBE_EVERY seconds, with the same short timeout. So a
hung replica (SIGSTOP) costs each worker one short wait, not one per request or one
every few seconds. The mark in Redis lives SHARED_MARK_SECONDS unless the probe renews
it, so a process that died probing cannot keep a replica out for good.

Only reads that change nothing and need nothing newer than what they find come here
(getReceipt, the receipt pages); everything that writes, or decides on what it reads,
reads the primary.
"""

import contextlib
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ObjectDoesNotExist
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from receco.lib import sharedcache
from receco.lib.postgresql import watchdog

logger = logging.getLogger(__name__)

T = TypeVar("T")
REPLICAS = tuple(alias for alias in settings.DATABASES if alias.startswith("replica"))
PROBE_EVERY = 2.0  # seconds between health checks of a replica marked down
SHARED_MARK_SECONDS = 10.0
SHARED_VIEW_EVERY = 1.0  # how often a process reads the other processes' marks
# How long after a change its rows are read from the primary: longer than a healthy
# replica ever lags.
FRESH_SECONDS = 60

_lock = threading.Lock()
_down: set[str] = set()  # marked down by this process, which probes them
_shared_down: set[str] = set()  # marked down by any process, as last read from Redis
_shared_read_at = 0.0


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
    yet) or fails (the replica is then marked down), or when the row ``name`` names was
    changed moments ago (``wrote``)."""
    alias = pick()
    if alias is not None and name is not None and _changed_lately(name):
        alias = None
    if alias is not None:
        try:
            return _on_replica(alias, query)
        except ObjectDoesNotExist:
            pass
        except DatabaseError as exc:
            _mark_down(alias, exc)
    return query(DEFAULT_DB_ALIAS)


def _mark(name: str) -> str:
    return f"written:{name}"


def _changed_lately(name: str) -> bool:
    # With the shared cache down nobody can say: the primary answers.
    return sharedcache.guarded("read-your-writes", lambda: cache.get(_mark(name)) is not None, True)


def pick() -> str | None:
    """The replica a read goes to now: one at random of those no process marked down
    (the marks in Redis read again every SHARED_VIEW_EVERY seconds), or None."""
    if not REPLICAS:
        return None
    if time.monotonic() - _shared_read_at >= SHARED_VIEW_EVERY:
        _read_shared_marks()
    well = [alias for alias in REPLICAS if alias not in _down and alias not in _shared_down]
    return random.choice(well) if well else None


def _on_replica(alias: str, query: Callable[[str], T]) -> T:
    connection = connections[alias]
    connection.ensure_connection()  # bounded by the replica's connect_timeout
    # A hung server answers nothing and enforces no statement_timeout: the watchdog cuts
    # the connection after the replica's short deadline, not the primary's long one.
    token = watchdog.arm(connection.connection.fileno(), settings.DATABASE_REPLICA_TIMEOUT)
    try:
        return query(alias)
    finally:
        watchdog.disarm(token)


def _mark_down(alias: str, exc: Exception) -> None:
    with contextlib.suppress(DatabaseError):
        connections[alias].close()
    params = connections[alias].get_connection_params()
    params.pop("cursor_factory", None)  # the probe's one statement has a deadline of its own
    with _lock:
        if alias in _down:
            return
        _down.add(alias)
    set_shared_mark(alias, True)
    logger.warning(
        "read replica %s failed (%s); reading from the primary until it answers again",
        alias,
        type(exc).__name__,
    )
    threading.Thread(target=_probe, args=(alias, params), name=f"receco-probe-{alias}", daemon=True).start()


def _probe(alias: str, params: dict) -> None:
    """Check ``alias`` every PROBE_EVERY seconds until it answers; then let reads go to it."""
    while True:
        time.sleep(PROBE_EVERY)
        if _answers(params):
            break
        set_shared_mark(alias, True)  # still down: keep the others away too
    set_shared_mark(alias, False)
    with _lock:
        _down.discard(alias)
        _shared_down.discard(alias)
    logger.warning("read replica %s answers again; reading from it", alias)


def _answers(params: dict) -> bool:
    try:
        with psycopg.connect(**params, autocommit=True) as connection:
            token = watchdog.arm(connection.fileno(), settings.DATABASE_REPLICA_TIMEOUT)
            try:
                connection.execute("SELECT 1")
            finally:
                watchdog.disarm(token)
    except (psycopg.Error, OSError):
        return False
    return True


def shared_mark_key(alias: str) -> str:
    """The Redis key of the mark that says ``alias`` is down, for every process."""
    return sharedcache.key(f"replica-down:{alias}")


def set_shared_mark(alias: str, down: bool) -> None:
    """Mark ``alias`` down (for SHARED_MARK_SECONDS) or well for every process, in Redis."""
    client = sharedcache.redis_client()
    if client is None:
        return
    key = shared_mark_key(alias)
    command = ("SET", key, "1", "EX", str(int(SHARED_MARK_SECONDS))) if down else ("DEL", key)
    sharedcache.guarded("replica health", lambda: client.execute_command(*command), None)


def _read_shared_marks() -> None:
    global _shared_read_at, _shared_down
    _shared_read_at = time.monotonic()
    client = sharedcache.redis_client()
    if client is None:
        return
    keys = [shared_mark_key(alias) for alias in REPLICAS]
    marks = sharedcache.guarded("replica health", lambda: client.execute_command("MGET", *keys), None)
    if marks is not None:
        _shared_down = {alias for alias, mark in zip(REPLICAS, marks, strict=True) if mark}


def _forget_the_parent() -> None:
    # A forked child has no probing thread: what its parent marked down it will find out again.
    global _lock, _down, _shared_down, _shared_read_at
    _lock, _down, _shared_down, _shared_read_at = threading.Lock(), set(), set(), 0.0


os.register_at_fork(after_in_child=_forget_the_parent)
