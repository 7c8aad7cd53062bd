"""Asking for receipts to be sent to the email address or phone number a customer gave.

Attaching a contact (``attach_contact``: the receipt page's form, updateReceiptContact;
``schedule_deliveries``: a sale that carries one) records one Delivery per channel, as
far as the daily limits allow (receipts.delivery_limits), and once the transaction
commits queues it on the task runner (receipts.tasks), which sends it
(receipts.sending). ``requeue_due`` is the sweep for deliveries whose task was lost.

Personal data stays out of logs: destinations appear masked.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from receco.errors import RateLimited
from receco.lib import replicas
from receco.ops import metrics
from receipts import delivery_limits
from receipts.contacts import mask_destination
from receipts.models import Delivery, Receipt
from receipts.tasks import enqueue
from webhooks.models import EventType
from webhooks.outbox import emit

logger = logging.getLogger(__name__)

# A queued or sending delivery untouched for this long lost its task (a crash between
# commit and enqueue, a killed worker): the sweep queues it again.
STALE_AFTER = timedelta(minutes=15)


class DeliveryLimited(RateLimited):
    """A daily limit refuses a delivery asked for: ``refused`` says which (receipts.delivery_limits)."""

    def __init__(self, refused: list[delivery_limits.Planned]):
        message = "; ".join(planned.message for planned in refused) + "; try again later"
        super().__init__(message, max(planned.retry_after for planned in refused))
        self.refused = refused


def attach_contact(
    receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool = False
) -> list[delivery_limits.Planned]:
    """Store cleaned contact data on the receipt and send the receipt to each contact given
    (``keyed``: asked for with the merchant's API key); a field given as None is left as
    it was. Returns what became of each delivery (queued, or a duplicate of one moments ago).

    All or nothing: raises DeliveryLimited, and stores nothing, when a daily limit
    refuses a delivery (receipts.delivery_limits).
    """
    with transaction.atomic():
        planned = _plan(receipt, email, phone, keyed=keyed)
        refused = [entry for entry in planned if entry.status == delivery_limits.LIMITED]
        if refused:
            metrics.rate_limit_refused("deliveries_daily")
            for entry in refused:
                metrics.delivery(entry.channel, entry.status)
            raise DeliveryLimited(refused)
        changes = {"customer_email": email, "customer_phone": phone}
        changes = {field: value for field, value in changes.items() if value is not None}
        for field, value in changes.items():
            setattr(receipt, field, value)
        receipt.save(update_fields=[*changes, "updated_at"])
        replicas.wrote(receipt.token, receipt.short_code)
        _record(receipt, planned, keyed=keyed)
        emit(EventType.RECEIPT_CONTACT_UPDATED, receipt)
    return planned


def schedule_deliveries(
    receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool = False
) -> list[delivery_limits.Planned]:
    """Send a new receipt to the contacts its sale carried, as far as the daily limits
    allow: the sale is stored whatever they say. Call it in the sale's transaction.
    Returns what became of each delivery, those the limits refused included."""
    planned = _plan(receipt, email, phone, keyed=keyed)
    _record(receipt, planned, keyed=keyed)
    return planned


def _plan(receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool) -> list[delivery_limits.Planned]:
    wanted = [(channel, to) for channel, to in ((Delivery.Channel.EMAIL, email), (Delivery.Channel.SMS, phone)) if to]
    if not wanted:
        return []
    delivery_limits.lock(receipt, [destination for _, destination in wanted])
    return delivery_limits.plan(receipt, wanted, keyed=keyed, now=timezone.now())


def _record(receipt: Receipt, planned: list[delivery_limits.Planned], *, keyed: bool) -> None:
    """Record a Delivery for each planned one that is to be sent, and queue it once the
    transaction commits."""
    for entry in planned:
        masked = mask_destination(entry.channel, entry.destination)
        metrics.delivery(entry.channel, entry.status)
        if entry.status != delivery_limits.QUEUED:
            logger.info("delivery of receipt %s to %s not sent: %s", receipt.pk, masked, entry.status)
            continue
        delivery = Delivery.objects.create(
            receipt=receipt, channel=entry.channel, destination=entry.destination, keyed=keyed
        )
        logger.info("delivery %s (%s) of receipt %s queued", delivery.pk, masked, receipt.pk)
        # robust: a queue that cannot be reached must not fail the request that stored the
        # contact; the delivery stays queued and the sweep (senddeliveries) picks it up.
        transaction.on_commit(lambda pk=delivery.pk: enqueue(pk), robust=True)


def requeue_due() -> int:
    """Queue again every delivery whose retry time has come or whose task was lost; return how many.

    With the immediate task backend (development) retries wait for this; with the
    database backend the worker schedules them itself and this is only the safety net.
    """
    now = timezone.now()
    count = 0
    for delivery in Delivery.objects.due(now, now - STALE_AFTER).only("pk", "status"):
        if delivery.status != Delivery.Status.RETRYING:
            # Lost task or dead worker: make it claimable again. Counted as an attempt
            # already when it was sending, so a message that kills workers ends.
            Delivery.objects.filter(pk=delivery.pk, status=delivery.status).update(
                status=Delivery.Status.RETRYING, updated_at=now
            )
        enqueue(delivery.pk)
        count += 1
    return count
