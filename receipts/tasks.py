"""Background tasks, run by django-tasks (see settings.TASKS and the README)."""

from django_tasks import task

from receipts import deliveries


@task()
def send_delivery(delivery_id: int) -> str:
    """Send one receipt delivery (``receipts.deliveries.run_delivery``); returns its status.

    Only the id travels through the queue: no personal data in the task table.
    """
    return deliveries.run_delivery(delivery_id)
