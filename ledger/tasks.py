"""The log's appender as a django-tasks task, and what wakes it: the receipts hook that,
once a sale, a refund, a void or a receipt set aside has committed, queues the task for
when the row is older than the commit lag, at most once a second per process
(receco.lib.wakeups, as the outbox wakes its dispatcher). The task worker
(``manage.py db_worker``) runs it; no operator needs to remember ``appendlog``.

A receipt then waits for its proof about RECECO_LOG_COMMIT_LAG seconds, plus up to a
second of the wake-up's pace and the worker's poll: the appender publishes a checkpoint
each time it has caught up (docs/verification.md, "How long a receipt waits"). A wake-up
lost (a crash right after the commit) leaves the receipt to the next one, or to
``appendlog --once``, which the scheduler runs every few minutes.
"""

from django.conf import settings
from django_tasks import task

from ledger.appender import BATCH, append_batch
from receco.lib import signingkeys, wakeups
from receipts import hooks

# The most batches one task appends before it queues the next and ends, so that a
# backlog does not keep one task running for ever.
BATCHES = 10


@task()
def append_log(batches: int = BATCHES) -> int:
    """Append up to ``batches`` batches of committed receipts; return the log's size after.
    Queues another task when the backlog is larger than that (in the worker)."""
    size = 0
    for _ in range(batches):
        result = append_batch(BATCH)
        size = result.size
        if result.count < BATCH:
            return size
    if append_log.get_backend().supports_defer:
        append_log.enqueue()
    return size


wake = wakeups.Wakeup(append_log, delay=lambda: settings.RECECO_LOG_COMMIT_LAG)

# The changes that add an entry to the log.
LOGGED = frozenset({hooks.CREATED, hooks.REFUNDED, hooks.VOIDED, hooks.SET_ASIDE})


class AppendOnCommit(hooks.Hook):
    """The receipts hook of the log: adds no row to a change, wakes the appender once it
    has committed (nothing while signing is off, nor for a test receipt: nothing would be
    appended)."""

    name = "log"
    told = LOGGED

    def committed(self, change: hooks.Change) -> None:
        if change.receipt.livemode and signingkeys.keyring() is not None:
            wake()
