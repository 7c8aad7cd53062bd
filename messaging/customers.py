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

from messaging import channels, limits, outbox
from messaging.models import EMAIL, SMS, WHATSAPP, OptIn
from receco.errors import InvalidInput, RateLimited
from receco.ops import metrics
from receipts import hooks
from receipts.contacts import mask_destination
from receipts.models import Receipt

logger = logging.getLogger(__name__)


WHATSAPP_NOT_OFFERED = "phone_channel: WhatsApp is not offered for this receipt's shop; leave it out for SMS"


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
        phone_channel = channel_for_phone(change)
        planned = plan(change.receipt, change.email, change.phone, keyed=change.keyed, phone_channel=phone_channel)
        if change.kind == hooks.CONTACT_UPDATED:
            refused = [entry for entry in planned if entry.status == limits.LIMITED]
            if refused:
                metrics.rate_limit_refused("deliveries_daily")
                for entry in refused:
                    metrics.delivery(entry.channel, entry.status)
                raise DeliveryLimited(refused)
        record(change.receipt, planned, keyed=change.keyed)
        return planned


def channel_for_phone(change: hooks.Change) -> str:
    """The channel the receipt goes on to the change's number: the one the customer chose
    (Receipt.customer_phone_channel), SMS by default. WhatsApp where the merchant does not
    offer it: a contact given later is refused (InvalidInput, nothing stored); a sale, or
    its refund, is sent by SMS instead, since the sale must be stored whatever it asks."""
    chosen = change.receipt.customer_phone_channel or SMS
    if chosen == WHATSAPP and not channels.offers_whatsapp(change.receipt.merchant_id):
        if change.kind == hooks.CONTACT_UPDATED:
            raise InvalidInput(WHATSAPP_NOT_OFFERED)
        return SMS
    return chosen


def plan(
    receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool, phone_channel: str = SMS
) -> list[limits.Planned]:
    """What would become of a delivery of ``receipt`` to each contact given (the number on
    ``phone_channel``), under the daily limits, which hold until the transaction ends (limits.lock)."""
    wanted = [(channel, to) for channel, to in ((EMAIL, email), (phone_channel, phone)) if to]
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
        # WhatsApp's rules: the customer's opt-in is kept with the delivery it asked for.
        opt_in = (OptIn.TILL if keyed else OptIn.RECEIPT_PAGE) if entry.channel == WHATSAPP else ""
        delivery = outbox.add(
            entry.channel, receipt.merchant_id, entry.destination, receipt=receipt, keyed=keyed, opt_in=opt_in
        )
        logger.info("delivery %s (%s) of receipt %s queued", delivery.pk, masked, receipt.pk)
