"""Waking a task of the task runner once a change has committed, at most once a second
per process whatever the rate of changes: the outbox's dispatcher (messaging.outbox) and
the log's appender (ledger.tasks) are woken this way.

A wake-up queues the task only if the one this process queued last may already have run
by the time it must run for this change, and then for no sooner than ``every`` seconds
after that one. A task that runs finds every change committed before it (the dispatcher:
every pending delivery; the appender: every receipt older than its lag), so the changes
in between need no task of their own; nothing personal travels in the queue.

A task that must not run before ``delay`` seconds have passed (the appender takes only
rows older than its commit lag) is queued for then. The immediate backend (development,
tests) cannot wait: it runs a wake-up for now at once and drops one for later.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.utils import timezone

# A change committed this close to the run time of the task already queued wakes another
# (the clocks of the web and worker machines may differ a little).
MARGIN = 0.1

_ALL: list[Wakeup] = []


class Wakeup:
    """Wakes ``task`` (a django-tasks task taking no arguments) when called: at most once
    every ``every`` seconds per process, and ``delay()`` seconds after the change."""

    def __init__(self, task, *, every: float = 1.0, delay: Callable[[], float] = lambda: 0.0):
        self.task = task
        self.every = every
        self.delay = delay
        # time.monotonic() at which the task this process queued last may run.
        self.runs_at = float("-inf")
        _ALL.append(self)

    def __call__(self, at: datetime | None = None) -> None:
        """Make sure the task runs after this moment plus its delay (or at ``at``, a
        retry's time): call it once the change has committed."""
        delay = self.delay()
        now = time.monotonic()
        wanted = now + delay
        if at is None and wanted + MARGIN < self.runs_at:
            # The task queued last has not run yet, and runs late enough to find this change
            # (only a backend that defers sets runs_at): most changes end here, at no cost.
            return
        if not self.task.get_backend().supports_defer:
            if at is None and delay <= 0:
                self.task.enqueue()
            return
        if at is not None:
            self.task.using(run_after=at).enqueue()
            return
        runs_at = max(wanted, self.runs_at + self.every)
        if runs_at > now:
            self.task.using(run_after=timezone.now() + timedelta(seconds=runs_at - now)).enqueue()
        else:
            self.task.enqueue()
        self.runs_at = runs_at  # only once it is queued: a failed wake-up is tried again by the next change

    def forget(self) -> None:
        """Act as a new process would: no task of its own queued yet (tests)."""
        self.runs_at = float("-inf")


def forget_all() -> None:
    """``forget`` every wake-up of this process (tests)."""
    for wakeup in _ALL:
        wakeup.forget()
