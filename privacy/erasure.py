"""Erasing a customer's email address or phone number from everything the service keeps,
while the receipts, their signatures and the receipt log stay valid (docs/privacy.md).

Each layer erases its own rows, and this module, above them all, has each do so in one
transaction and keeps an ErasureRecord of it:

- receipts: the contact fields of every receipt that holds it, from every merchant
  (receipts.writer; receipts.signing never signs a contact, so nothing signed changes);
- messaging: the destination of every delivery to it, those not sent yet never sent
  (messaging.erasure);
- webhooks: the contact in every stored event body (webhooks.erasure);
- whatever an app above registers (``register``): the receipt locker's sessions and the
  shared-cache entries it keys by a contact.

Logs hold no contact to erase: every line masks them (tests/ops/test_log_privacy.py), and
so do the errors kept on deliveries (messaging.transports.scrub). No hook hears of an
erasure and no event is sent: a merchant learns nothing of it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from messaging import erasure as outbox
from messaging.models import EMAIL, SMS
from privacy.models import ErasureRecord
from receipts import writer
from receipts.contacts import EMAIL_FIELD, PHONE_FIELD
from receipts.models import Receipt
from webhooks import erasure as events

logger = logging.getLogger(__name__)

# E.164: a plus, then up to 15 digits, the first not 0.
_E164 = re.compile(r"\+[1-9][0-9]{5,14}")
_KINDS = {EMAIL_FIELD: ErasureRecord.Kind.EMAIL, PHONE_FIELD: ErasureRecord.Kind.PHONE}
_CHANNELS = {EMAIL_FIELD: EMAIL, PHONE_FIELD: SMS}

# What an app above adds to an erasure: given the receipts' field the contact is kept in
# (customer_email or customer_phone) and the contact, erase what it keeps of it and say
# how many things it erased.
Eraser = Callable[[str, str], int]
_ERASERS: dict[str, Eraser] = {}


@dataclass(frozen=True)
class Erased:
    """What an erasure changed: the kind of contact ("phone", "email") and how many rows
    of each kind ("receipts", "deliveries", "webhook_events", and each registered eraser's)."""

    kind: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def register(name: str, eraser: Eraser) -> None:
    """Have every erasure of a contact run ``eraser`` too, its count kept under ``name``
    (an app's ``ready()``); one registered under the same name before is replaced."""
    _ERASERS[name] = eraser


def contact_field(contact: str) -> str:
    """The receipts' field ``contact`` is kept in: customer_email for an email address,
    customer_phone for a number in E.164.

    Raises ValueError for anything else (a number not yet normalised, say)."""
    if "@" in contact:
        return EMAIL_FIELD
    if _E164.fullmatch(contact):
        return PHONE_FIELD
    raise ValueError("not a phone number in E.164 (+2348031234567) nor an email address")


def erase_contact(contact: str, *, via: str) -> Erased:
    """Erase ``contact``, a phone number in E.164 or an email address (matched whatever the
    case of its letters), from every receipt of every merchant, every delivery, every
    stored webhook body and what the registered erasers keep, in one transaction, and
    record that it happened (``via``: one of ErasureRecord.Via). Returns the counts;
    erasing a contact nothing holds any more changes nothing and records it all the same.

    Raises ValueError for a contact or ``via`` that is neither.
    """
    via = ErasureRecord.Via(via)
    name = contact_field(contact)
    if name == EMAIL_FIELD:
        contact = contact.lower()
    with transaction.atomic():
        counts = {
            "receipts": writer.erase_contact(name, contact),
            "deliveries": outbox.forget(outbox.to_contact(_CHANNELS[name], contact)),
            "webhook_events": events.erase_contact(name, contact),
        }
        for eraser_name, eraser in _ERASERS.items():
            counts[eraser_name] = eraser(name, contact)
        erased = record(via, _KINDS[name], counts)
    return erased


def detach(receipt: Receipt, name: str, contact: str, *, via: str = ErasureRecord.Via.LINK) -> Erased:
    """Remove ``contact`` (the value of ``receipt``'s field ``name``) from that one
    purchase: the receipt, the sale it refunds or the refunds of it, their deliveries to
    the contact and their webhook bodies; record it (``via``, a "Not your receipt?" link
    by default). Returns the counts: all 0, and nothing recorded, when none of them held
    it any more, so that following the link again changes nothing."""
    via = ErasureRecord.Via(via)
    sale_id = receipt.refund_of_id or receipt.pk
    purchase = list(Receipt.objects.filter(pk=sale_id)) + list(Receipt.objects.filter(refund_of_id=sale_id))
    counts = {"receipts": 0, "deliveries": 0, "webhook_events": 0}
    with transaction.atomic():
        for member in purchase:
            counts["receipts"] += writer.detach_contact(member, name, contact)
            deliveries = outbox.to_contact(_CHANNELS[name], contact).filter(receipt_id=member.pk)
            counts["deliveries"] += outbox.forget(deliveries)
            counts["webhook_events"] += events.detach(member.pk, name, contact)
            if member.pk == receipt.pk:
                setattr(receipt, name, getattr(member, name))
        if not any(counts.values()):
            return Erased(_KINDS[name], counts)
        return record(via, _KINDS[name], counts)


def record(via: str, kind: str, counts: dict[str, int]) -> Erased:
    """Keep an ErasureRecord of an erasure (``via``, ``kind``: ErasureRecord's choices) and
    log it, without the contact; return it as Erased."""
    ErasureRecord.objects.create(via=via, kind=kind, counts=counts)
    # The kind and the counts only: never the contact, nor which receipts held it.
    logger.info("%s erased (via %s): %s", kind, via, ", ".join(f"{n} {name}" for name, n in counts.items()))
    return Erased(kind, counts)
