"""Sending receipts to the email address or phone number a customer gave: the hook through
which the receipts app's changes reach the outbox (receipts.hooks).

A sale that carries a contact, a contact given later (the receipt page's form,
updateReceiptContact) and the refund of a sale that has one each record one Delivery per
channel, as far as the daily limits allow (messaging.limits), in the change's
transaction; the outbox sends them once it commits. A contact given later is all or
nothing: when a limit refuses a delivery, DeliveryLimited undoes the change. A sale is
stored whatever the limits say: what became of each delivery is its outcome.

Personal data stays out of logs: destinations appear masked.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from messaging import limits, outbox
from messaging.transports import EMAIL, SMS
from receco.errors import RateLimited
from receco.ops import metrics
from receipts import hooks
from receipts.contacts import mask_destination
from receipts.models import Receipt

logger = logging.getLogger(__name__)


class DeliveryLimited(RateLimited):
    """A daily limit refuses a delivery asked for: ``refused`` says which (messaging.limits)."""

    def __init__(self, refused: list[limits.Planned]):
        message = "; ".join(planned.message for planned in refused) + "; try again later"
        super().__init__(message, max(planned.retry_after for planned in refused))
        self.refused = refused


class SendToContacts(hooks.Hook):
    """The receipts hook: records the deliveries a change's contact asks for. Its outcome,
    ``deliveries``, is what became of each (limits.Planned)."""

    name = "deliveries"

    def wants(self, change: hooks.Change) -> bool:
        return bool(change.email or change.phone)

    def write(self, change: hooks.Change) -> list[limits.Planned]:
        planned = plan(change.receipt, change.email, change.phone, keyed=change.keyed)
        if change.kind == hooks.CONTACT_UPDATED:
            refused = [entry for entry in planned if entry.status == limits.LIMITED]
            if refused:
                metrics.rate_limit_refused("deliveries_daily")
                for entry in refused:
                    metrics.delivery(entry.channel, entry.status)
                raise DeliveryLimited(refused)
        record(change.receipt, planned, keyed=change.keyed)
        return planned


def plan(receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool) -> list[limits.Planned]:
    """What would become of a delivery of ``receipt`` to each contact given, under the
    daily limits, which hold until the transaction ends (limits.lock)."""
    wanted = [(channel, to) for channel, to in ((EMAIL, email), (SMS, phone)) if to]
    if not wanted:
        return []
    limits.lock(receipt, [destination for _, destination in wanted])
    return limits.plan(receipt, wanted, keyed=keyed, now=timezone.now())


def record(receipt: Receipt, planned: list[limits.Planned], *, keyed: bool) -> None:
    """Hand the outbox a delivery for each planned one that is to be sent."""
    for entry in planned:
        masked = mask_destination(entry.channel, entry.destination)
        metrics.delivery(entry.channel, entry.status)
        if entry.status != limits.QUEUED:
            logger.info("delivery of receipt %s to %s not sent: %s", receipt.pk, masked, entry.status)
            continue
        delivery = outbox.add(entry.channel, receipt.merchant_id, entry.destination, receipt=receipt, keyed=keyed)
        logger.info("delivery %s (%s) of receipt %s queued", delivery.pk, masked, receipt.pk)
