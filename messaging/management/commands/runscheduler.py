"""``runscheduler``: the periodic jobs in one process, each on its schedule, for as long as
it runs; what the compose ``scheduler`` service runs, and ``./dev up`` beside its server.

    manage.py runscheduler           # every job at start, then each on its schedule
    manage.py runscheduler --once    # every job once, then stop

Every five minutes: the API call counters into the usage table (``flushusage``), receipt
and webhook deliveries whose task was lost back onto the queue (``senddeliveries``,
``sendwebhooks``), and receipts whose append to the log was lost appended (``appendlog
--once``); once a day, retention (``applyretention``, docs/privacy.md). Each job is a
management command of its own, safe to repeat; one that fails is logged and tried again at
its next time, and the others run on. SIGINT and SIGTERM stop it between jobs.
"""

import logging
import signal
import threading
import time
from dataclasses import dataclass
from io import StringIO

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import close_old_connections

logger = logging.getLogger(__name__)

MINUTES = 60
DAY = 24 * 60 * MINUTES


@dataclass(frozen=True)
class Job:
    command: str
    args: tuple[str, ...] = ()
    every: float = 5 * MINUTES  # seconds

    def __str__(self) -> str:
        return " ".join((self.command, *self.args))


JOBS = (
    Job("flushusage"),
    Job("senddeliveries"),
    Job("sendwebhooks"),
    Job("appendlog", ("--once",)),
    Job("applyretention", every=DAY),
)


class Schedule:
    """When each job runs next: all of them at ``start``, then each ``every`` seconds after
    its run ended."""

    def __init__(self, jobs: tuple[Job, ...], start: float):
        self.next_runs = dict.fromkeys(jobs, start)

    def due(self, now: float) -> list[Job]:
        return [job for job, at in self.next_runs.items() if at <= now]

    def ran(self, job: Job, now: float) -> None:
        self.next_runs[job] = now + job.every

    def next_run(self) -> float:
        return min(self.next_runs.values())


class Command(BaseCommand):
    help = (
        "Run the periodic jobs, each on its schedule (every five minutes: flushusage, senddeliveries, "
        "sendwebhooks, appendlog --once; once a day: applyretention), all of them at start. "
        "SIGINT or SIGTERM stops it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="run every job once, then stop")

    def handle(self, *args, once=False, verbosity=1, **options):
        stop = threading.Event()
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, lambda *_: stop.set())
        schedule = Schedule(JOBS, time.monotonic())
        while not stop.is_set():
            for job in schedule.due(time.monotonic()):
                if stop.is_set():
                    break
                self._run(job, verbosity)
                schedule.ran(job, time.monotonic())
            if once:
                return
            close_old_connections()  # none kept open (or broken) across the wait
            stop.wait(max(0.0, schedule.next_run() - time.monotonic()))

    def _run(self, job: Job, verbosity: int) -> None:
        output = self.stdout if verbosity else StringIO()
        try:
            call_command(job.command, *job.args, stdout=output, stderr=output)
        except Exception:
            # Tried again at its next time; the other jobs run on.
            logger.exception("runscheduler: %s failed", job)
