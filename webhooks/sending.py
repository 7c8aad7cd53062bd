"""Sending webhook deliveries: what the task runner's dispatcher and send_webhook do (webhooks.tasks).

``claim_pending`` claims a batch of new deliveries for the dispatcher, ``run_delivery``
one delivery for send_webhook (so a task run twice sends once); ``send_claimed`` signs the event's
body with the endpoint's secrets, POSTs it (webhooks.client) and records the outcome
(``record_outcome``: the one place an attempt's outcome is recorded). A 2xx answer within
TIMEOUT is success; a timeout, a connection error or any other answer is tried again
after growing pauses for RETRY_FOR, then the delivery fails. An endpoint whose delivery
fails that way, with no success since it began failing, is disabled and its merchant's
owners are told by email (webhooks.notices).
"""

from __future__ import annotations

import logging
import random
import time
from datetime import datetime, timedelta
from typing import NamedTuple

from django.db import connections, router, transaction
from django.utils import timezone

from receco.ops import metrics
from webhooks import client, listeners, notices
from webhooks.models import Attempt, Delivery, Endpoint
from webhooks.signing import EVENT_ID_HEADER, HEADER, signature_header

logger = logging.getLogger(__name__)

TIMEOUT = 10.0  # seconds for the whole request
# Pause after the n-th failed attempt: RETRY_BASE * 3**(n-1) (1, 3, 9, 27 minutes …),
# at most RETRY_CAP, plus up to 20% jitter; no attempt is made after RETRY_FOR.
RETRY_BASE = timedelta(minutes=1)
RETRY_CAP = timedelta(hours=6)
RETRY_FOR = timedelta(days=3)
# Deliveries a dispatcher claims at a time (webhooks.tasks.dispatch_webhooks): few enough
# that it sends them all well within the sweep's STALE_AFTER even if each times out.
BATCH = 10


class Outcome(NamedTuple):
    """What ``run_delivery`` came to: the delivery's status afterwards ("missing" if it is
    gone, or its status if it was not due), and when to try again if another is due."""

    status: str
    retry_at: datetime | None = None


def run_delivery(delivery_id: int, now: datetime | None = None) -> Outcome:
    """Send one delivery if it is pending or retrying; claims it first with one conditional UPDATE."""
    claimed = Delivery.objects.filter(
        pk=delivery_id, status__in=[Delivery.Status.PENDING, Delivery.Status.RETRYING]
    ).update(status=Delivery.Status.SENDING, updated_at=timezone.now())
    if not claimed:
        status = Delivery.objects.filter(pk=delivery_id).values_list("status", flat=True).first()
        return Outcome(status or "missing")
    return send_claimed(delivery_id, now)


def claim_pending(limit: int = BATCH) -> list[int]:
    """Claim up to ``limit`` pending deliveries, oldest first, for this process to send
    (their status becomes "sending"); return their ids.

    On PostgreSQL one UPDATE claims them, skipping rows another dispatcher is claiming
    (FOR UPDATE SKIP LOCKED); elsewhere each is claimed by a conditional UPDATE of its own.
    """
    now = timezone.now()
    connection = connections[router.db_for_write(Delivery)]
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(Delivery._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET status = %s, updated_at = %s WHERE id IN ("  # noqa: S608 (names from the model)
                f"SELECT id FROM {table} WHERE status = %s ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED"
                ") RETURNING id",
                [Delivery.Status.SENDING, now, Delivery.Status.PENDING, limit],
            )
            return sorted(row[0] for row in cursor.fetchall())
    pending = Delivery.objects.filter(status=Delivery.Status.PENDING).order_by("pk")
    return [
        pk
        for pk in pending.values_list("pk", flat=True)[:limit]
        if Delivery.objects.filter(pk=pk, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.SENDING, updated_at=now
        )
    ]


def send_claimed(delivery_id: int, now: datetime | None = None) -> Outcome:
    """Send a delivery this process claimed (status "sending") and record the outcome."""
    delivery = Delivery.objects.select_related("event", "endpoint").filter(pk=delivery_id).first()
    if delivery is None:
        # Gone, or its endpoint (or event) is: deleted while the sale that made it was
        # being stored (the outbox has no constraints in the database: webhooks.models).
        # Such a delivery has nowhere to go; leaving it would have the sweep retry it forever.
        orphaned, _ = Delivery.objects.filter(pk=delivery_id).delete()
        if orphaned:
            logger.info("webhook delivery %s dropped: its endpoint or event no longer exists", delivery_id)
        return Outcome("missing")
    endpoint = delivery.endpoint
    if not endpoint.enabled:
        return record_outcome(delivery, None, 0, "endpoint disabled", final=True)
    body = delivery.event.body.encode()
    headers = {
        HEADER: signature_header(endpoint.signing_secrets(), int(time.time()), body),
        EVENT_ID_HEADER: delivery.event.public_id,
    }
    try:
        answer = client.post(endpoint.url, body, headers, TIMEOUT)
    except client.SendError as failure:
        return record_outcome(delivery, None, failure.duration_ms, str(failure), now=now)
    error = "" if 200 <= answer.status < 300 else f"answered HTTP {answer.status}"
    return record_outcome(delivery, answer.status, answer.duration_ms, error, now=now)


def record_outcome(
    delivery: Delivery,
    status_code: int | None,
    duration_ms: int,
    error: str,
    *,
    final: bool = False,
    now: datetime | None = None,
) -> Outcome:
    """Record one attempt of ``delivery`` (``error`` empty: it succeeded) and what follows
    from it: success, a retry after a pause, or failure for good (``final``, or RETRY_FOR
    is over), which disables an endpoint that has not succeeded since it began failing."""
    now = now or timezone.now()
    endpoint = delivery.endpoint
    delivery.attempts += 1
    delivery.last_status_code = status_code
    disable = False
    if not error:
        delivery.status, delivery.next_attempt_at = Delivery.Status.SUCCEEDED, None
    else:
        retry_at = now + retry_delay(delivery.attempts)
        if final or retry_at > delivery.created_at + RETRY_FOR:
            delivery.status, delivery.next_attempt_at = Delivery.Status.FAILED, None
            disable = not final and endpoint.enabled and endpoint.failing_since is not None
        else:
            delivery.status, delivery.next_attempt_at = Delivery.Status.RETRYING, retry_at
    with transaction.atomic():
        delivery.save(update_fields=["status", "attempts", "next_attempt_at", "last_status_code", "updated_at"])
        Attempt.objects.create(
            delivery=delivery,
            succeeded=not error,
            status_code=status_code,
            duration_ms=duration_ms,
            error=error[:300],
            next_attempt_at=delivery.next_attempt_at,
        )
        if not error:
            Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=False).update(failing_since=None)
        elif not final:
            Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=now)
        if disable:
            reason = f"Disabled {now:%Y-%m-%d %H:%M} UTC: its deliveries failed for {RETRY_FOR.days} days"
            disabled = Endpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
                enabled=False, disabled_reason=reason, updated_at=now
            )
            if disabled:
                listeners.changed()  # .update() sends no post_save
                transaction.on_commit(lambda: notices.endpoint_disabled(endpoint, reason), robust=True)
    metrics.webhook_attempt(delivery.status)
    if error:
        logger.warning(
            "webhook delivery %s to endpoint %s attempt %s: %s (%s)",
            delivery.pk,
            endpoint.pk,
            delivery.attempts,
            error,
            delivery.status,
        )
    return Outcome(delivery.status, delivery.next_attempt_at)


def retry_delay(attempts: int) -> timedelta:
    """The pause after the ``attempts``-th failed attempt: 1, 3, 9, 27 minutes …, at most 6 hours, +0-20%."""
    delay = min(RETRY_BASE * 3 ** max(0, attempts - 1), RETRY_CAP)
    return delay * (1 + random.random() * 0.2)
