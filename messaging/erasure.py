"""Erasing customers' email addresses and phone numbers from the outbox (privacy.erasure,
privacy.retention): each delivery of a receipt to a customer (email, SMS, WhatsApp)
keeps its record (channel, receipt, status, when, its cost) and loses its destination,
with what would lead back to it: the provider's id of the message (the provider's own
records hold the number by it, and its later reports name it) and the provider's words
of a failure.

A delivery not sent yet is not sent at all: it fails with ERASED, and no
``delivery_failed`` is sent for it (the merchant learns nothing of an erasure); nor for
one a sender was sending meanwhile, once that attempt fails (messaging.outbox). Its
``last_error`` keeps what an earlier attempt said, which transports.scrub already masked.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from messaging.models import EMAIL, PHONE_CHANNELS, TO_CUSTOMERS, Delivery

ERASED = "Not sent: the customer's contact was erased"


def to_customers() -> QuerySet:
    """Every delivery of a receipt to a customer (email, SMS, WhatsApp) whose destination is still known."""
    return Delivery.objects.filter(channel__in=TO_CUSTOMERS, receipt__isnull=False).exclude(destination="")


def to_contact(channel: str, contact: str) -> QuerySet:
    """The deliveries to ``contact`` on ``channel``: an email address whatever its case, a
    number exactly (by SMS and on WhatsApp alike)."""
    if channel == EMAIL:
        return to_customers().filter(channel=EMAIL, destination__iexact=contact)
    if channel in PHONE_CHANNELS:
        return to_customers().filter(channel__in=PHONE_CHANNELS, destination=contact)
    return to_customers().filter(channel=channel, destination=contact)


def made_before(moment: datetime) -> QuerySet:
    """The deliveries to customers made before ``moment`` (retention)."""
    return to_customers().filter(created_at__lt=moment)


def forget(deliveries: QuerySet) -> int:
    """Erase the destination of each of ``deliveries``; the ones still to be sent fail with
    ERASED. Returns how many were erased."""
    now = timezone.now()
    with transaction.atomic():
        deliveries.filter(status__in=[Delivery.Status.PENDING, Delivery.Status.RETRYING]).update(
            status=Delivery.Status.FAILED, next_attempt_at=None, last_error=ERASED, updated_at=now
        )
        return deliveries.update(destination="", provider_message_id="", report_reason="", updated_at=now)
