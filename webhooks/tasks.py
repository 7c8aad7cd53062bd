"""Background tasks of webhooks, run by django-tasks like receipt deliveries (receipts.tasks)."""

from datetime import datetime

from django.db import transaction
from django_tasks import task
from django_tasks_db import DatabaseBackend

from webhooks import sending


@task()
def send_webhook(delivery_id: int) -> str:
    """Send one webhook delivery (webhooks.sending.run_delivery), and queue its next attempt
    if this one failed and another is due; returns its status."""
    attempt = sending.run_delivery(delivery_id)
    if attempt.retry_at is not None:
        enqueue(delivery_id, run_after=attempt.retry_at)
    return attempt.status


def enqueue(delivery_id: int, run_after: datetime | None = None) -> bool:
    """Hand the delivery to the task runner, for ``run_after`` if given; return whether it was queued.

    A backend that cannot wait (the immediate one) is not given retries: the sweep
    (webhooks.outbox.requeue_due, the ``sendwebhooks`` command) picks them up.
    """
    queued = send_webhook
    if run_after is not None:
        if not send_webhook.get_backend().supports_defer:
            return False
        queued = send_webhook.using(run_after=run_after)
    queued.enqueue(delivery_id)
    return True


def enqueue_with_change(delivery_id: int) -> None:
    """Queue a delivery recorded in the transaction in progress: in that transaction when the
    queue is a table of the same database (the database backend: the task row is then part
    of the outbox, and the change costs one commit), else once it commits (the immediate
    backend would send before the change is committed)."""
    if isinstance(send_webhook.get_backend(), DatabaseBackend):
        enqueue(delivery_id)
        return
    # robust: a queue that cannot be reached must not fail the change that was stored;
    # the delivery stays pending and the sweep picks it up.
    transaction.on_commit(lambda: enqueue(delivery_id), robust=True)
