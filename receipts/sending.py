"""Sending one delivery: what the task runner's send_delivery does (receipts.tasks).

``run_delivery`` claims the delivery (so a task run twice sends once), composes the
message (receipts.messages), sends it, and records the outcome; a failure that may pass
is given a time for another attempt, with growing pauses, at most
RECECO_DELIVERY_MAX_ATTEMPTS attempts in all. Test receipts go to the sink backends,
never to SMTP or an SMS provider. Destinations appear masked in logs and error records.
"""

import logging
import random
import smtplib
import traceback
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.core.mail import get_connection
from django.db import transaction
from django.utils import timezone

from receco.ops import metrics
from receipts import sms
from receipts.messages import compose_email, compose_sms
from receipts.models import Delivery
from webhooks.models import EventType
from webhooks.outbox import emit

logger = logging.getLogger(__name__)

# Pause before attempt n+1 is RETRY_BASE * 4**(n-1) (1, 4, 16, 64 minutes …), capped,
# with up to 20% jitter so a provider outage is not followed by a thundering herd.
RETRY_BASE = timedelta(minutes=1)
RETRY_CAP = timedelta(hours=6)
_MAX_ERROR_LENGTH = 500


class DeliveryFailed(Exception):
    def __init__(self, message: str, *, permanent: bool):
        super().__init__(message)
        self.permanent = permanent


class Attempt(NamedTuple):
    """What ``run_delivery`` came to: the delivery's status afterwards ("missing" if it is
    gone), and when to try again if this attempt failed and another is due."""

    status: str
    retry_at: datetime | None = None


def run_delivery(delivery_id: int) -> Attempt:
    """Send one delivery if it is due.

    Claims the delivery first with one conditional UPDATE: a task that runs twice, or a
    sweep racing a worker, finds it claimed and does nothing.
    """
    claimed = Delivery.objects.filter(
        pk=delivery_id, status__in=[Delivery.Status.QUEUED, Delivery.Status.RETRYING]
    ).update(status=Delivery.Status.SENDING, updated_at=timezone.now())
    delivery = Delivery.objects.select_related("receipt").filter(pk=delivery_id).first()
    if delivery is None or not claimed:
        return Attempt(delivery.status if delivery else "missing")
    delivery.attempts += 1
    try:
        _send(delivery)
    except DeliveryFailed as failure:
        return _record_failure(delivery, str(failure), permanent=failure.permanent)
    except Exception as exc:
        # A template bug or anything unforeseen: recorded and retried like an outage,
        # the traceback logged with the destination masked.
        logger.error("delivery %s raised:\n%s", delivery.pk, _scrub("".join(traceback.format_exception(exc)), delivery))
        return _record_failure(delivery, _describe(exc, delivery), permanent=False)
    delivery.status = Delivery.Status.SINK if delivery.receipt.is_test else Delivery.Status.SENT
    delivery.sent_at = timezone.now()
    delivery.last_error = ""
    delivery.next_attempt_at = None
    delivery.save()
    metrics.delivery(delivery.channel, delivery.status)
    logger.info("delivery %s (%s) %s", delivery.pk, delivery.masked_destination, delivery.status)
    return Attempt(delivery.status)


def _record_failure(delivery: Delivery, error: str, *, permanent: bool) -> Attempt:
    delivery.last_error = error[:_MAX_ERROR_LENGTH]
    if permanent or delivery.attempts >= settings.RECECO_DELIVERY_MAX_ATTEMPTS:
        delivery.status = Delivery.Status.FAILED
        delivery.next_attempt_at = None
        with transaction.atomic():
            delivery.save()
            emit(EventType.DELIVERY_FAILED, delivery.receipt)
        metrics.delivery(delivery.channel, delivery.status)
        logger.warning("delivery %s (%s) failed for good: %s", delivery.pk, delivery.masked_destination, error)
        return Attempt(delivery.status)
    delivery.status = Delivery.Status.RETRYING
    delivery.next_attempt_at = timezone.now() + retry_delay(delivery.attempts)
    delivery.save()
    metrics.delivery(delivery.channel, delivery.status)
    logger.warning(
        "delivery %s (%s) attempt %s failed, next at %s: %s",
        delivery.pk,
        delivery.masked_destination,
        delivery.attempts,
        delivery.next_attempt_at.isoformat(),
        error,
    )
    return Attempt(delivery.status, delivery.next_attempt_at)


def retry_delay(attempts: int) -> timedelta:
    """The pause after the ``attempts``-th failed attempt: 1, 4, 16, 64 minutes …, at most 6 hours, +0-20%."""
    delay = min(RETRY_BASE * 4 ** max(0, attempts - 1), RETRY_CAP)
    return delay * (1 + random.random() * 0.2)


def _send(delivery: Delivery) -> None:
    receipt = delivery.receipt
    if delivery.channel == Delivery.Channel.EMAIL:
        backend = settings.RECECO_SINK_EMAIL_BACKEND if receipt.is_test else None
        message = compose_email(receipt, delivery.destination)
        try:
            message.connection = get_connection(backend, fail_silently=False)
            message.send()
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryFailed(_describe(exc, delivery), permanent=True) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise DeliveryFailed(_describe(exc, delivery), permanent=False) from None
    else:
        backend = sms.get_backend(settings.RECECO_SINK_SMS_BACKEND if receipt.is_test else None)
        message = sms.SmsMessage(
            to=delivery.destination, body=compose_sms(receipt), idempotency_key=f"receco-delivery-{delivery.pk}"
        )
        try:
            backend.send(message)
        except sms.SmsError as exc:
            raise DeliveryFailed(_describe(exc, delivery), permanent=exc.permanent) from None


def _describe(exc: BaseException, delivery: Delivery) -> str:
    """``ExceptionClass: message`` with the destination masked: SMTP errors quote addresses."""
    return _scrub(f"{type(exc).__name__}: {exc}", delivery)[:_MAX_ERROR_LENGTH]


def _scrub(text: str, delivery: Delivery) -> str:
    text = text.replace(delivery.destination, delivery.masked_destination)
    if delivery.channel == Delivery.Channel.EMAIL:
        local_part = delivery.destination.rpartition("@")[0]
        if len(local_part) > 2:
            text = text.replace(local_part, local_part[:1] + "*******")
    else:
        # Numbers are also quoted without their "+" or in national form.
        text = text.replace(delivery.destination.lstrip("+"), delivery.masked_destination)
    return text
