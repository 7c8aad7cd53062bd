"""Sending receipts to the email address or phone number a customer gave.

Attaching a contact (``attach_contact``: the receipt page's form, updateReceiptContact;
``schedule_deliveries``: a sale that carries one) records one Delivery per channel, as
far as the daily limits allow (receipts.delivery_limits), and once the transaction
commits queues ``receipts.tasks.send_delivery`` on the task runner. ``run_delivery`` is
what that task does: it claims the delivery (so a task run twice sends once), composes
the message, sends it, and records the outcome; a failure that may pass is retried with
growing pauses, at most RECECO_DELIVERY_MAX_ATTEMPTS times in all. Test receipts go to
the sink backends, never to SMTP or an SMS provider.

Personal data stays out of logs and error records: destinations appear masked.
"""

from __future__ import annotations

import logging
import random
import smtplib
import traceback
from datetime import timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from receco.errors import RateLimited
from receipts import delivery_limits, sms
from receipts.contacts import mask_destination
from receipts.display import receipt_context
from receipts.models import Delivery, Receipt
from receipts.money import format_amount

logger = logging.getLogger(__name__)

# Pause before attempt n+1 is RETRY_BASE * 4**(n-1) (1, 4, 16, 64 minutes …), capped,
# with up to 20% jitter so a provider outage is not followed by a thundering herd.
RETRY_BASE = timedelta(minutes=1)
RETRY_CAP = timedelta(hours=6)
# A queued or sending delivery untouched for this long lost its task (a crash between
# commit and enqueue, a killed worker): the sweep queues it again.
STALE_AFTER = timedelta(minutes=15)
_MAX_ERROR_LENGTH = 500


class DeliveryFailed(Exception):
    def __init__(self, message: str, *, permanent: bool):
        super().__init__(message)
        self.permanent = permanent


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
            raise DeliveryLimited(refused)
        changes = {"customer_email": email, "customer_phone": phone}
        changes = {field: value for field, value in changes.items() if value is not None}
        for field, value in changes.items():
            setattr(receipt, field, value)
        receipt.save(update_fields=[*changes, "updated_at"])
        _record(receipt, planned, keyed=keyed)
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


def enqueue(delivery_id: int, run_after=None) -> bool:
    """Hand the delivery to the task runner, for ``run_after`` if given; return whether it was queued.

    A backend that cannot wait (the immediate one) is not given retries: ``requeue_due``
    (the ``senddeliveries`` command) picks them up when their time has come.
    """
    from receipts.tasks import send_delivery  # tasks imports this module

    task = send_delivery
    if run_after is not None:
        if not send_delivery.get_backend().supports_defer:
            return False
        task = send_delivery.using(run_after=run_after)
    task.enqueue(delivery_id)
    return True


def run_delivery(delivery_id: int) -> str:
    """Send one delivery if it is due; return its status afterwards.

    Claims the delivery first with one conditional UPDATE: a task that runs twice, or a
    sweep racing a worker, finds it claimed and does nothing.
    """
    claimed = Delivery.objects.filter(
        pk=delivery_id, status__in=[Delivery.Status.QUEUED, Delivery.Status.RETRYING]
    ).update(status=Delivery.Status.SENDING, updated_at=timezone.now())
    delivery = Delivery.objects.select_related("receipt").filter(pk=delivery_id).first()
    if delivery is None or not claimed:
        return delivery.status if delivery else "missing"
    delivery.attempts += 1
    try:
        _send(delivery)
    except DeliveryFailed as failure:
        _record_failure(delivery, str(failure), permanent=failure.permanent)
    except Exception as exc:
        # A template bug or anything unforeseen: recorded and retried like an outage,
        # the traceback logged with the destination masked.
        logger.error("delivery %s raised:\n%s", delivery.pk, _scrub("".join(traceback.format_exception(exc)), delivery))
        _record_failure(delivery, _describe(exc, delivery), permanent=False)
    else:
        delivery.status = Delivery.Status.SINK if delivery.receipt.is_test else Delivery.Status.SENT
        delivery.sent_at = timezone.now()
        delivery.last_error = ""
        delivery.next_attempt_at = None
        delivery.save()
        logger.info("delivery %s (%s) %s", delivery.pk, delivery.masked_destination, delivery.status)
    return delivery.status


def _record_failure(delivery: Delivery, error: str, *, permanent: bool) -> None:
    delivery.last_error = error[:_MAX_ERROR_LENGTH]
    if permanent or delivery.attempts >= settings.RECECO_DELIVERY_MAX_ATTEMPTS:
        delivery.status = Delivery.Status.FAILED
        delivery.next_attempt_at = None
        delivery.save()
        logger.warning("delivery %s (%s) failed for good: %s", delivery.pk, delivery.masked_destination, error)
        return
    delivery.status = Delivery.Status.RETRYING
    delivery.next_attempt_at = timezone.now() + retry_delay(delivery.attempts)
    delivery.save()
    logger.warning(
        "delivery %s (%s) attempt %s failed, next at %s: %s",
        delivery.pk,
        delivery.masked_destination,
        delivery.attempts,
        delivery.next_attempt_at.isoformat(),
        error,
    )
    enqueue(delivery.pk, run_after=delivery.next_attempt_at)


def retry_delay(attempts: int) -> timedelta:
    """The pause after the ``attempts``-th failed attempt: 1, 4, 16, 64 minutes …, at most 6 hours, +0-20%."""
    delay = min(RETRY_BASE * 4 ** max(0, attempts - 1), RETRY_CAP)
    return delay * (1 + random.random() * 0.2)


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


# --- composing and sending ----------------------------------------------------------


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


def compose_email(receipt: Receipt, to: str) -> EmailMultiAlternatives:
    """The receipt as an email to ``to``: a plain-text part and an HTML alternative, both with the link."""
    context = {**receipt_context(receipt), "url": receipt.public_url}
    subject = " ".join(render_to_string("receipts/email/subject.txt", context).split())
    text = render_to_string("receipts/email/receipt.txt", context)
    html = render_to_string("receipts/email/receipt.html", context)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        headers={"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All"},
    )
    message.attach_alternative(html, "text/html")
    return message


def compose_sms(receipt: Receipt) -> str:
    """One short text with the total and the link, in the GSM alphabet (currency code, not symbol)."""
    name = " ".join(receipt.merchant_name.split())
    if len(name) > 40:
        name = name[:37].rstrip() + "..."
    prefix = "[TEST] " if receipt.is_test else ""
    total = format_amount(receipt.total_amount, receipt.currency, symbol=False)
    return f"{prefix}Your receipt from {name}, {total}: {receipt.public_url}"


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
