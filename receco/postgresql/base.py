"""Django's PostgreSQL backend with a health check that costs no round trip.

Django checks a persistent connection before its first use in each request by sending
``SELECT 1``: a round trip to the server on every request, as long as the request's
own query. A connection the server has dropped (a restart, ``pg_terminate_backend``,
an idle timeout) has been closed by it or carries its last message, so its socket is
readable while an idle connection should have nothing to say. This backend looks at
the socket and only asks the server when something is waiting there.
"""

import select

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus


class DatabaseWrapper(base.DatabaseWrapper):
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
