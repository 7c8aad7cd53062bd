"""Background tasks, run by django-tasks (settings.TASKS; docs/delivery.md)."""

from datetime import datetime

from django_tasks import task

from receco.ops import requestid
from receipts import sending


@task()
def send_delivery(delivery_id: int, request_id: str | None = None) -> str:
    """Send one receipt delivery (receipts.sending.run_delivery), and queue its next attempt
    if this one failed and another is due; returns its status.

    Only the id travels through the queue: no personal data in the task table. The id of
    the request that queued it (``request_id``) marks its log lines, and its retries'.
    """
    with requestid.restored(request_id):
        attempt = sending.run_delivery(delivery_id)
        if attempt.retry_at is not None:
            enqueue(delivery_id, run_after=attempt.retry_at)
    return attempt.status


def enqueue(delivery_id: int, run_after: datetime | None = None) -> bool:
    """Hand the delivery to the task runner, for ``run_after`` if given; return whether it was queued.

    A backend that cannot wait (the immediate one) is not given retries: the sweep
    (receipts.deliveries.requeue_due, the ``senddeliveries`` command) picks them up when
    their time has come.
    """
    queued = send_delivery
    if run_after is not None:
        if not send_delivery.get_backend().supports_defer:
            return False
        queued = send_delivery.using(run_after=run_after)
    request_id = requestid.current()
    queued.enqueue(delivery_id, **({"request_id": request_id} if request_id else {}))
    return True
