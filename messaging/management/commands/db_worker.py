"""``db_worker``: django-tasks-db's task worker, which survives a database that stalls or
restarts (this app comes before django_tasks_db in INSTALLED_APPS, so its command is
this one): theirs, with its arguments, running a Worker of their class that does more.

Theirs exits on the first database error other than a locked SQLite file: a statement
cut off at its deadline (DATABASE_STATEMENT_TIMEOUT), a connection attempt that timed
out. This one logs it and tries again after a pause that grows while the database stays
away (huey's idle back-off) and starts again at the first pause once it answers. Nothing
is lost meanwhile: a task whose outcome could not be recorded stays claimed, and the
deliveries it was sending are reclaimed by the outbox's sweep (messaging.outbox).
"""

import logging
import os
import time

from django.core.management.base import CommandError
from django.db import InterfaceError, OperationalError, connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

logger = logging.getLogger("django_tasks_db")

FIRST_PAUSE = 0.5  # seconds
LONGEST_PAUSE = 10.0
# The worker's settings the command passes on as its arguments named them.
WORKER_OPTIONS = ("interval", "backend_name", "startup_delay", "max_tasks", "worker_id")


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
    """django-tasks-db's command (its arguments, its logging) running the Worker above."""

    help = db_worker.Command.help + ", which keeps going when the database does not answer for a while"

    def handle(self, *, verbosity, queue_name, exclude_queues, reload, batch, **options) -> None:
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_names,
            excluded_queue_names=excluded,
            batch=batch,
            **{name: options[name] for name in WORKER_OPTIONS},
        )
        if reload and not batch:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()  # in the child that runs the tasks only
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            worker.run()
