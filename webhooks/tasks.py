"""Background tasks of webhooks, run by django-tasks like receipt deliveries (receipts.tasks).

New deliveries are not queued one task each: a change records its deliveries "pending"
(webhooks.outbox) and, once it commits, wakes the dispatcher (``wake``), a task that
claims pending deliveries in batches and sends them (``dispatch_webhooks``). A process
queues at most one dispatcher per WAKE_EVERY: a change committed while the one it queued
has not run yet needs none of its own, as that one will find its deliveries. Retries,
the sweep's requeues and the admin's resends of one delivery are ``send_webhook`` tasks.
A wake-up lost (a crash right after the commit, a queue that cannot be reached) loses
nothing: the delivery stays pending and the sweep (webhooks.outbox.requeue_due) queues it.
"""

import time
from datetime import datetime, timedelta

from django.utils import timezone
from django_tasks import task

from webhooks import sending

# At most one dispatcher queued per this many seconds by each process.
WAKE_EVERY = 1.0
# A change committed this close to the run time of the dispatcher already queued wakes
# another (the clocks of the web and worker machines may differ a little).
WAKE_MARGIN = 0.1
# A dispatcher that has sent for this long queues the next one and ends, so that a
# steady stream of sales does not keep one task running for ever.
DISPATCH_FOR = 60.0


@task()
def send_webhook(delivery_id: int) -> str:
    """Send one webhook delivery (webhooks.sending.run_delivery), and queue its next attempt
    if this one failed and another is due; returns its status."""
    return _follow_up(delivery_id, sending.run_delivery(delivery_id))


@task()
def dispatch_webhooks() -> int:
    """Send the pending deliveries, claimed a batch at a time (webhooks.sending.claim_pending)
    until none is left; queue each failed one's next attempt. Returns how many were sent."""
    started, count = time.monotonic(), 0
    while claimed := sending.claim_pending():
        for delivery_id in claimed:
            _follow_up(delivery_id, sending.send_claimed(delivery_id))
            count += 1
        if time.monotonic() - started > DISPATCH_FOR:
            dispatch_webhooks.enqueue()
            break
    return count


def _follow_up(delivery_id: int, outcome: sending.Outcome) -> str:
    if outcome.retry_at is not None:
        enqueue(delivery_id, run_after=outcome.retry_at)
    return outcome.status


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


# time.monotonic() at which the dispatcher this process queued last may run: until then
# a new wake-up is not needed (see ``wake``).
_dispatch_runs_at = float("-inf")


def wake() -> None:
    """Make sure a dispatcher runs after this moment: call it once the change that recorded
    pending deliveries has committed (transaction.on_commit).

    With a backend that waits (the database one) this queues a dispatcher only if the one
    this process queued last may already have run, and then for no sooner than WAKE_EVERY
    after it: at most one dispatcher a second per process, whatever the rate of sales,
    and none waits for a slot of its own. The immediate backend runs one now, each time.
    """
    global _dispatch_runs_at
    backend = dispatch_webhooks.get_backend()
    if not backend.supports_defer:
        dispatch_webhooks.enqueue()
        return
    now = time.monotonic()
    if now + WAKE_MARGIN < _dispatch_runs_at:
        return  # the dispatcher queued last has not run yet: it will find this change's deliveries
    runs_at = max(now, _dispatch_runs_at + WAKE_EVERY)
    if runs_at > now:
        dispatch_webhooks.using(run_after=timezone.now() + timedelta(seconds=runs_at - now)).enqueue()
    else:
        dispatch_webhooks.enqueue()
    _dispatch_runs_at = runs_at  # only once it is queued: a failed wake-up is tried again by the next change
