"""Readiness: whether this instance can serve, checked afresh on each probe.

The database must answer within READY_TIMEOUT with every migration applied, and Redis
(when REDIS_URL is set) within its own short timeout. The reasons given are short and
fixed (the probes answer anyone); the details go to the log.
"""

import functools
import logging
from collections.abc import Callable

from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from receco.lib import sharedcache
from receco.lib.postgresql import watchdog

logger = logging.getLogger(__name__)

# Seconds the database has to answer a probe (a connection not yet open also has
# DATABASE_CONNECT_TIMEOUT to open).
READY_TIMEOUT = 2.0


# What /readyz tells besides readiness, by name: each app registers its own in its
# AppConfig.ready() (receco.ops knows no app).
_DETAILS: dict[str, tuple[Callable[[], str], bool]] = {}
NO_DATABASE = "unknown: the database did not answer"


def register_detail(name: str, state: Callable[[], str], *, reads_database: bool = False) -> None:
    """Have /readyz report ``state()`` under ``name`` in its details (not asked, when it
    ``reads_database`` and the database did not answer the probe)."""
    _DETAILS[name] = (state, reads_database)


def details(database_answers: bool = True) -> dict[str, str]:
    """The registered details of this instance's state, by name."""
    return {
        name: state() if database_answers or not reads_database else NO_DATABASE
        for name, (state, reads_database) in sorted(_DETAILS.items())
    }


def problems() -> dict[str, str]:
    """What keeps this instance from serving, by component ("database", "migrations",
    "redis"); empty when it is ready."""
    found = {}
    try:
        pending = _pending_migrations()
    except DatabaseError:
        logger.warning("Readiness: the database did not answer", exc_info=True)
        found["database"] = "the database did not answer"
    else:
        if pending:
            found["migrations"] = f"{len(pending)} migration(s) not applied: " + ", ".join(pending[:5])
    if not _redis_answers():
        found["redis"] = "Redis did not answer"
    return found


def _pending_migrations() -> list[str]:
    """The project's migrations the database has not recorded as applied, in name order.
    Raises DatabaseError."""
    connection.ensure_connection()
    token = None
    if connection.vendor == "postgresql":  # a server that stops answering is cut off in time
        token = watchdog.arm(connection.connection.fileno(), READY_TIMEOUT)
    try:
        applied = set(MigrationRecorder(connection).applied_migrations())
    finally:
        if token is not None:
            watchdog.disarm(token)
    return sorted(f"{app}.{name}" for app, name in _needed() - applied)


@functools.cache  # the migration files do not change while the process runs
def _needed() -> frozenset[tuple[str, str]]:
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    return frozenset(node for leaf in graph.leaf_nodes() for node in graph.forwards_plan(leaf))


def _redis_answers() -> bool:
    client = sharedcache.redis_client()
    if client is None:
        return True
    try:
        client.ping()  # the client's timeouts are sharedcache.TIMEOUT
    except Exception:
        logger.warning("Readiness: Redis did not answer", exc_info=True)
        return False
    return True
