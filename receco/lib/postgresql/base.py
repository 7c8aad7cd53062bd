"""Django's PostgreSQL backend with a health check that costs no round trip, and a
deadline on every statement.

Django checks a persistent connection before its first use in each request by sending
``SELECT 1``: a round trip to the server on every request, as long as the request's
own query. A connection the server has dropped (a restart, ``pg_terminate_backend``,
an idle timeout) has been closed by it or carries its last message, so its socket is
readable while an idle connection should have nothing to say. This backend looks at
the socket and only asks the server when something is waiting there.

Statements end on the server after DATABASE_STATEMENT_TIMEOUT (the connection's
``statement_timeout``); a server that does not answer at all is cut off by the client
a little later (receco.lib.postgresql.watchdog). ``migrate`` and ``seedreceipts`` lift the
statement timeout for their own connection (``lift_statement_timeout``, ``statement_timeout_lifted``): building an index
or filling a large table takes longer than a request.
"""

import contextlib
import functools
import select

from django.conf import settings
from django.db import connections
from django.db.backends.postgresql import base
from django.db.models.signals import pre_migrate
from psycopg.pq import TransactionStatus

from receco.lib.postgresql import watchdog

# How long after the server's own statement timeout the client gives up on it.
DEADLINE_GRACE = 2.0  # seconds


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        timeout = settings.DATABASE_STATEMENT_TIMEOUT
        if timeout:
            params["cursor_factory"] = _with_deadline(params["cursor_factory"], timeout + DEADLINE_GRACE)
        return params

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        if connection.info.transaction_status != TransactionStatus.IDLE:
            return super().is_usable()
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable or super().is_usable()


@functools.cache
def _with_deadline(cursor_class: type, seconds: float) -> type:
    """``cursor_class`` whose statements are cut off after ``seconds``."""

    class DeadlineCursor(cursor_class):
        def execute(self, query, params=None, **kwargs):
            token = watchdog.arm(self.connection.fileno(), seconds)
            try:
                return super().execute(query, params, **kwargs)
            finally:
                watchdog.disarm(token)

        def executemany(self, query, params_seq, **kwargs):
            token = watchdog.arm(self.connection.fileno(), seconds)
            try:
                return super().executemany(query, params_seq, **kwargs)
            finally:
                watchdog.disarm(token)

    DeadlineCursor.__name__ = DeadlineCursor.__qualname__ = f"Deadline{cursor_class.__name__}"
    DeadlineCursor.without_deadline = cursor_class
    return DeadlineCursor


def lift_statement_timeout(using: str) -> None:
    """Let the connection ``using`` run statements as long as they take, on the server and
    in the client: for commands that build indexes or fill tables (``migrate``,
    ``seedreceipts``), never for requests."""
    connection = connections[using]
    if not isinstance(connection, DatabaseWrapper):
        return
    connection.ensure_connection()
    factory = connection.connection.cursor_factory
    connection.connection.cursor_factory = getattr(factory, "without_deadline", factory)
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")


@contextlib.contextmanager
def statement_timeout_lifted(using: str):
    """``lift_statement_timeout`` for the block only: the connection has its deadline again after."""
    connection = connections[using]
    if not isinstance(connection, DatabaseWrapper):
        yield
        return
    connection.ensure_connection()
    factory = connection.connection.cursor_factory
    lift_statement_timeout(using)
    try:
        yield
    finally:
        if connection.connection is not None and not connection.connection.closed:
            connection.connection.cursor_factory = factory
            with connection.cursor() as cursor:
                cursor.execute("RESET statement_timeout")


def _no_statement_timeout_for_migrations(using: str, **kwargs) -> None:
    lift_statement_timeout(using)


pre_migrate.connect(_no_statement_timeout_for_migrations, dispatch_uid="receco-no-statement-timeout-for-migrations")
