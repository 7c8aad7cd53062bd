"""The log's appender as a django-tasks task, for deployments that run the task worker
rather than ``manage.py appendlog`` (settings.TASKS)."""

from django_tasks import task

from ledger.appender import BATCH, append_batch


@task()
def append_log(batches: int = 10) -> int:
    """Append up to ``batches`` batches of committed receipts; return the log's size after."""
    size = 0
    for _ in range(batches):
        result = append_batch(BATCH)
        size = result.size
        if result.count < BATCH:
            break
    return size
