"""Sending a sale's receipt again from the dashboard (its page's "Send again"): to the
contact it has, or to one the customer gives at the counter, which is stored as the
receipt's contact, as updateReceiptContact stores it (receipts.writer.update_contact).

Either way it is a send like any other: one Delivery per channel through the one outbox
(messaging.customers), under the same daily limits per receipt and per destination, on
the shop's authority (its staff: ``keyed``, as a refund made in the dashboard is), all or
nothing when a limit refuses. The audit trail records who asked for it and where it went,
masked.
"""

from __future__ import annotations

from django.db import transaction

from merchants.audit import log_api_change
from messaging import customers, limits
from messaging.models import Delivery
from receco.errors import InvalidInput
from receipts import hooks, writer
from receipts.contacts import mask_destination
from receipts.models import Receipt

NO_CONTACT = "This receipt has no email address or phone number: give one to send it to"


def resend(
    receipt: Receipt, email: str | None = None, phone: str | None = None, phone_channel: str | None = None
) -> list[limits.Planned]:
    """Send ``receipt`` again: to ``email`` and/or ``phone`` when given (already cleaned:
    receipts.contacts.clean_contact), stored as its contact; else to the contact it has.
    Returns what became of each delivery (limits.Planned: queued, or a duplicate of one sent
    moments ago). Raises InvalidInput when there is nowhere to send it, and
    messaging.customers.DeliveryLimited (nothing sent, nothing stored) when a limit refuses."""
    with transaction.atomic():
        if email or phone:
            written = writer.update_contact(receipt, email, phone, keyed=True, phone_channel=phone_channel)
            planned = written.outcomes.get(customers.SendToContacts.name, [])
        else:
            if not (receipt.customer_email or receipt.customer_phone):
                raise InvalidInput(NO_CONTACT)
            change = hooks.Change(
                hooks.CONTACT_UPDATED,
                receipt,
                keyed=True,
                email=receipt.customer_email,
                phone=receipt.customer_phone,
            )
            planned = customers.SendToContacts().write(change)
        places = ", ".join(mask_destination(entry.channel, entry.destination) for entry in planned)
        log_api_change(receipt, {"sent again to": ["", places]}, named=f"sale {receipt.short_code}")
    return planned


def outcome_words(planned: list[limits.Planned]) -> str:
    """What became of a resend, for the page that asked for it: "Sent again to
    a*******@example.com (email) and +234*******89 (SMS)."; a destination sent the receipt
    moments ago is not sent it twice, and said so."""
    queued = [entry for entry in planned if entry.status == limits.QUEUED]
    duplicates = [entry for entry in planned if entry.status == limits.DUPLICATE]
    sentences = []
    if queued:
        sentences.append(f"Sent again to {_places(queued)}.")
    if duplicates:
        sentences.append(f"Already sent to {_places(duplicates)} in the last few minutes: not sent twice.")
    return " ".join(sentences)


def _places(planned: list[limits.Planned]) -> str:
    return " and ".join(
        f"{mask_destination(entry.channel, entry.destination)} ({Delivery(channel=entry.channel).channel_label})"
        for entry in planned
    )
