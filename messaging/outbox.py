"""Sending everything the service sends out: the one outbox, and the one module that sends.

A change records its deliveries pending, in its own transaction (``add``), and once it
commits wakes the dispatcher (``wake``), a task of the task runner. The dispatcher
(``dispatch``) runs senders side by side (messaging.senders); each claims one delivery
at a time (``claim``: one UPDATE … FOR UPDATE SKIP LOCKED on PostgreSQL, so that
dispatchers of several workers never claim the same one; its attempt is counted then),
sends it with its channel's transport (messaging.transports) and records what came of
it (``send``): sent, tried again when the channel's Retry says, or failed for good. At
most PER_LANE senders of a dispatcher serve one lane (a webhook endpoint, the SMTP
server, the SMS provider), so a slow party never holds up another merchant's messages or
a customer's email. No task row is written per delivery.

Nothing is lost in between: a wake-up that never ran (a crash right after the commit, a
queue that cannot be reached) leaves its deliveries pending, and a sender killed while
sending leaves its delivery "sending"; the sweep (``sweep``, the ``senddeliveries``
command, every few minutes) records the latter as a failed attempt after STALE_AFTER,
makes the retries whose time has come claimable, and wakes the dispatcher.
"""

from __future__ import annotations

import logging
import time
import traceback
from datetime import datetime, timedelta

from django.db import connections, router, transaction
from django.db.models import F, Q
from django.utils import timezone
from django_tasks import task

from messaging import senders, transports
from messaging.models import TO_CUSTOMERS, Delivery
from messaging.signals import delivery_failed
from messaging.transports import Dropped, Failed, Outcome, Sent
from receco.lib import wakeups
from receco.ops import metrics, requestid

logger = logging.getLogger(__name__)

# A delivery left "sending" this long lost its sender (a killed worker): longer than any
# one attempt takes (a webhook's 10 seconds, an SMTP exchange's few timeouts).
STALE_AFTER = timedelta(minutes=5)
# Senders of a dispatcher in a worker, and how many of them may serve one lane at once.
SENDERS = 8
PER_LANE = 2
# A dispatcher that has sent for this long queues the next one and ends, so that a
# steady stream of messages does not keep one task running for ever.
DISPATCH_FOR = 60.0
# At most one dispatcher queued per this many seconds by each process (``wake``).
WAKE_EVERY = 1.0


# --- Recording ----------------------------------------------------------------------


def add(
    channel: str,
    merchant_id: int | None,
    destination: str,
    *,
    receipt=None,
    payload_id: int | None = None,
    keyed: bool = False,
    opt_in: str = "",
) -> Delivery:
    """Record a pending delivery, in the transaction in progress, and wake the dispatcher
    once it commits; ``opt_in``: how its customer asked for it (WhatsApp). Returns it."""
    transports.transport(channel)  # LookupError for a channel nothing can send
    delivery = Delivery.objects.create(
        channel=channel,
        merchant_id=merchant_id,
        destination=destination,
        receipt=receipt,
        payload_id=payload_id,
        keyed=keyed,
        opt_in=opt_in,
        request_id=requestid.current(),
    )
    # robust: a queue that cannot be reached must not fail the change that recorded it;
    # the delivery stays pending and the sweep finds it.
    transaction.on_commit(wake, robust=True)
    return delivery


# --- Claiming and sending -----------------------------------------------------------


def claim(full_lanes: list[str] = (), limit: int = 1, now: datetime | None = None) -> list[tuple[int, str, str]]:
    """Claim up to ``limit`` claimable deliveries, oldest first, none on ``full_lanes``:
    their status becomes "sending" and their attempts one more. Returns (id, channel,
    destination) of each.

    On PostgreSQL one UPDATE claims them, skipping rows another dispatcher is claiming
    (FOR UPDATE SKIP LOCKED); elsewhere each is claimed by a conditional UPDATE of its own.
    """
    now = now or timezone.now()
    connection = connections[router.db_for_write(Delivery)]
    if connection.vendor == "postgresql":
        qn = connection.ops.quote_name
        table, pending, retrying = qn(Delivery._meta.db_table), Delivery.Status.PENDING, Delivery.Status.RETRYING
        # A lane is the channel, or "<channel>:<destination>" (transports.Transport.lane).
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET status = %s, attempts = attempts + 1, updated_at = %s WHERE id IN ("  # noqa: S608 (names from the model)
                f"SELECT id FROM {table} WHERE (status = %s OR (status = %s AND next_attempt_at <= %s))"
                " AND NOT (channel = ANY(%s::text[]) OR channel || ':' || destination = ANY(%s::text[]))"
                " ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING id, channel, destination",
                [Delivery.Status.SENDING, now, pending, retrying, now, list(full_lanes), list(full_lanes), limit],
            )
            return sorted(cursor.fetchall())
    candidates = Delivery.objects.claimable(now).exclude(_on_lanes(full_lanes)).order_by("pk")
    claimed = []
    for pk, channel, destination in candidates.values_list("pk", "channel", "destination")[:limit]:
        if (
            Delivery.objects.claimable(now)
            .filter(pk=pk)
            .update(status=Delivery.Status.SENDING, attempts=F("attempts") + 1, updated_at=now)
        ):
            claimed.append((pk, channel, destination))
    return claimed


def _on_lanes(lanes: list[str]) -> Q:
    on = Q(pk__in=[])
    for lane in lanes:
        channel, _, destination = lane.partition(":")
        on |= Q(channel=channel, destination=destination) if destination else Q(channel=channel)
    return on


def send(delivery_id: int, now: datetime | None = None) -> Outcome | None:
    """Send a delivery this process claimed (status "sending") with its channel's
    transport, and record what came of it; None when it is gone or not claimed (or was
    dropped: it had nowhere to go any more)."""
    delivery = Delivery.objects.select_related("receipt").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.SENDING:
        return None
    with requestid.restored(delivery.request_id):
        transport = transports.transport(delivery.channel)
        try:
            sent = transport.send(delivery)
        except Dropped as reason:
            Delivery.objects.filter(pk=delivery.pk).delete()
            logger.info("delivery %s dropped: %s", delivery.pk, reason)
            return None
        except Failed as failure:
            return record(delivery, failure, now=now)
        except Exception as exc:
            # A template bug or anything unforeseen: recorded and retried like an outage,
            # the traceback logged with the destination masked.
            logger.error("delivery %s raised:\n%s", delivery.pk, transports.scrub(_traceback(exc), delivery))
            return record(delivery, Failed(transports.describe(exc, delivery)), now=now)
        return record(delivery, sent, now=now)


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def record(delivery: Delivery, result: Sent | Failed, now: datetime | None = None) -> Outcome:
    """Record one attempt of ``delivery`` and what follows from it, with what its channel
    keeps of it (``Transport.recorded``), in one transaction: sent; or, failed, tried
    again when the channel's Retry says, else failed for good (``delivery_failed`` sent).
    Returns the outcome."""
    now = now or timezone.now()
    transport = transports.transport(delivery.channel)
    outcome = _outcome(delivery, transport, result, now)
    delivery.status, delivery.next_attempt_at = outcome.status, outcome.retry_at
    delivery.last_error, delivery.last_status_code = outcome.error, outcome.status_code
    fields = ["status", "next_attempt_at", "last_error", "last_status_code", "sent_at", "updated_at"]
    if outcome.succeeded:
        delivery.sent_at = now
    if isinstance(result, Sent) and (result.provider or result.parts):
        delivery.provider, delivery.provider_message_id, delivery.parts = (
            result.provider,
            result.message_id,
            result.parts,
        )
        fields += ["provider", "provider_message_id", "parts"]
    with transaction.atomic():
        delivery.save(update_fields=fields)
        if delivery.provider_message_id:
            # Erased while it was being sent: the provider's id goes too (messaging.erasure).
            Delivery.objects.filter(pk=delivery.pk, destination="").update(provider_message_id="")
        transport.recorded(delivery, outcome)
        if outcome.status == Delivery.Status.FAILED:
            _tell_failed(delivery)
    metrics.delivery(delivery.channel, outcome.status)
    _log(delivery, outcome)
    if outcome.retry_at is not None:
        wake(at=outcome.retry_at)
    return outcome


def _tell_failed(delivery: Delivery) -> None:
    """Send ``delivery_failed`` for ``delivery`` as it is stored now, its receipt as it now
    reads: never for one whose customer's contact was erased while it was being sent (the
    merchant learns nothing of an erasure, messaging.erasure), nor with the contact the
    sender read before the erasure."""
    stored = Delivery.objects.select_related("receipt").filter(pk=delivery.pk).first()
    if stored is None or (stored.channel in TO_CUSTOMERS and not stored.destination):
        return
    delivery_failed.send(sender=Delivery, delivery=stored)


def _outcome(delivery: Delivery, transport, result: Sent | Failed, now: datetime) -> Outcome:
    if isinstance(result, Sent):
        return Outcome("", result.status, None, result.status_code, result.duration_ms)
    error = str(result)[: transports.MAX_ERROR_LENGTH] or type(result).__name__
    retry_at = None
    if not result.permanent:
        retry_at = transport.retry().next_attempt(delivery.attempts, delivery.created_at, now)
    status = Delivery.Status.RETRYING if retry_at else Delivery.Status.FAILED
    return Outcome(error, status, retry_at, result.status_code, result.duration_ms, result.permanent)


def _log(delivery: Delivery, outcome: Outcome) -> None:
    where = f"delivery {delivery.pk} ({delivery.masked_destination})"
    if outcome.succeeded:
        logger.info("%s %s", where, outcome.status)
    elif outcome.retry_at is not None:
        at = outcome.retry_at.isoformat()
        logger.warning("%s attempt %s failed, next at %s: %s", where, delivery.attempts, at, outcome.error)
    else:
        logger.warning("%s failed for good: %s", where, outcome.error)


# --- The dispatcher -----------------------------------------------------------------


def dispatch(threads: bool = True, now: datetime | None = None) -> tuple[int, bool]:
    """Send every claimable delivery: with SENDERS side by side (``threads``), else one
    after the other in this thread (inside a transaction, which other threads could not
    see, and in development); for DISPATCH_FOR at most. Returns how many were sent and
    whether time ran out with work left."""

    def take(full_lanes: list[str]) -> tuple[str, int] | None:
        claimed = claim(full_lanes, now=now)
        if not claimed:
            return None
        pk, channel, destination = claimed[0]
        return transports.transport(channel).lane(destination), pk

    count = SENDERS if threads else 1
    until = time.monotonic() + DISPATCH_FOR
    return senders.run(count, PER_LANE, until, take, lambda pk: send(pk, now=now), _close_connections)


def _close_connections() -> None:
    for connection in connections.all(initialized_only=True):
        connection.close()


@task()
def dispatch_deliveries() -> int:
    """The one dispatcher: send what is claimable (``dispatch``); queue the next one if
    time ran out first. Returns how many were sent."""
    in_worker = dispatch_deliveries.get_backend().supports_defer  # the immediate backend runs it inline
    sent, late = dispatch(threads=in_worker and not transaction.get_connection().in_atomic_block)
    if late:
        dispatch_deliveries.enqueue()
    return sent


# At most one dispatcher queued per WAKE_EVERY seconds by each process (receco.lib.wakeups).
_wakeup = wakeups.Wakeup(dispatch_deliveries, every=WAKE_EVERY)


def wake(at: datetime | None = None) -> None:
    """Make sure a dispatcher runs after this moment (or at ``at``, a retry's time): call
    it once the change that recorded pending deliveries has committed.

    With a backend that waits (the database one) a wake-up for now queues a dispatcher
    only if the one this process queued last may already have run, and then for no
    sooner than WAKE_EVERY after it: at most one dispatcher a second per process, whatever
    the rate of sales (receco.lib.wakeups). The immediate backend (development, tests)
    runs one now, and leaves retries to the sweep.
    """
    _wakeup(at)


# --- The sweep, and sending again ---------------------------------------------------


def sweep(now: datetime | None = None) -> int:
    """Make claimable every delivery that is due, and wake the dispatcher; return how many.

    Due: a retry whose time has come; one pending for STALE_AFTER (its wake-up was lost);
    one "sending" for STALE_AFTER (its sender died): that attempt is recorded as failed,
    and the delivery is tried again as its channel's Retry says, or fails for good. Each
    channel tidies first what it keeps past its time (``Transport.sweep``).
    """
    now = now or timezone.now()
    for transport in transports.registered():
        transport.sweep(now)
    stale = now - STALE_AFTER
    count = 0
    for delivery in Delivery.objects.filter(status=Delivery.Status.SENDING, updated_at__lt=stale):
        # Only if its sender did not finish meanwhile, and by one sweep when two run at once.
        lost = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.SENDING, updated_at=delivery.updated_at)
        if lost.update(updated_at=now):
            record(delivery, Failed("no outcome: the sender stopped while sending"), now=now)
            count += 1
    due = Q(status=Delivery.Status.RETRYING, next_attempt_at__lte=now)
    count += Delivery.objects.filter(due).update(status=Delivery.Status.PENDING, updated_at=now)
    count += Delivery.objects.filter(status=Delivery.Status.PENDING, updated_at__lt=stale).count()
    if count:
        dispatch_deliveries.enqueue()
    return count


def retry_now(deliveries) -> int:
    """Try the failed or retrying ones of ``deliveries`` (a queryset) again now, from
    their first attempt; return how many."""
    with transaction.atomic():
        again = deliveries.filter(status__in=[Delivery.Status.FAILED, Delivery.Status.RETRYING])
        count = again.update(
            status=Delivery.Status.PENDING, next_attempt_at=None, attempts=0, updated_at=timezone.now()
        )
        transaction.on_commit(wake, robust=True)
    return count


def resend(delivery: Delivery) -> Delivery:
    """Send what ``delivery`` sent once more, to the same destination, as a new delivery; return it."""
    with transaction.atomic():
        return add(
            delivery.channel,
            delivery.merchant_id,
            delivery.destination,
            receipt=delivery.receipt,
            payload_id=delivery.payload_id,
            keyed=delivery.keyed,
            opt_in=delivery.opt_in,
        )
