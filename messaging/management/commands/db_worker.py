"""``db_worker``: django-tasks-db's task worker, which survives a database that stalls or
restarts (this app comes before django_tasks_db in INSTALLED_APPS, so its command is
this one).

Theirs exits on the first database error other than a locked SQLite file: a statement
cut off at its deadline (DATABASE_STATEMENT_TIMEOUT), a connection attempt that timed
out. This one logs it and tries again after a pause that grows while the database stays
away (huey's idle back-off) and starts again at the first pause once it answers. Nothing
is lost meanwhile: a task whose outcome could not be recorded stays claimed, and the
deliveries it was sending are reclaimed by the outbox's sweep (messaging.outbox).
"""

import logging
import time

from django.db import InterfaceError, OperationalError, connections
from django_tasks_db.management.commands import db_worker

logger = logging.getLogger("django_tasks_db")

FIRST_PAUSE = 0.5  # seconds
LONGEST_PAUSE = 10.0


class Worker(db_worker.Worker):
    def run(self) -> None:
        pause = FIRST_PAUSE
        while self.running:
            started = time.monotonic()
            try:
                super().run()
                return  # a batch done, or --max-tasks reached
            except (OperationalError, InterfaceError) as exc:
                if time.monotonic() - started > LONGEST_PAUSE:
                    pause = FIRST_PAUSE  # it answered for a while: a new outage
                logger.warning("database not available (%s): trying again in %g s", exc, pause)
                for connection in connections.all(initialized_only=True):
                    connection.close()  # a new one at the next try
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)


class Command(db_worker.Command):
    help = db_worker.Command.help + ", which keeps going when the database does not answer for a while"

    def handle(self, *args, **options):
        # django-tasks-db makes its Worker in handle(); this command's is the one above.
        original, db_worker.Worker = db_worker.Worker, Worker
        try:
            return super().handle(*args, **options)
        finally:
            db_worker.Worker = original
