"""How each channel sends a delivery, and when it tries again: one Transport per channel,
as healthchecks has one per kind of channel (``Channel.transport()``).

The outbox (messaging.outbox) claims a delivery, hands it to its channel's transport
(``send``), and records the outcome, with the channel's own records (``recorded``), in
one transaction. Email and SMS are here: a receipt composed for its customer
(receipts.rendering.messages), test receipts to a sink, destinations masked in every error kept or
logged. Webhooks register theirs (webhooks.transport: signing, address checks, attempts
recorded, endpoints disabled).
"""

from __future__ import annotations

import random
import smtplib
from dataclasses import dataclass
from datetime import datetime, timedelta

from anymail.exceptions import AnymailAPIError, AnymailError, AnymailRecipientsRefused
from django.conf import settings
from django.core.mail import get_connection

from messaging import channels, sms
from messaging.erasure import ERASED
from messaging.models import EMAIL, SMS, Delivery
from receipts import gsm
from receipts.rendering.messages import compose_email, compose_sms

MAX_ERROR_LENGTH = 500


@dataclass(frozen=True)
class Retry:
    """When a channel tries a failed delivery again (huey's ``retries``, ``retry_delay``
    and ``retry_backoff``): after ``first``, each pause ``backoff`` times the one before,
    at most ``cap``, plus up to 20% jitter (no thundering herd after an outage); no
    attempt after ``attempts`` in all, nor later than ``within`` after it was made."""

    first: timedelta
    backoff: int
    cap: timedelta
    attempts: int | None = None
    within: timedelta | None = None

    def delay(self, attempts: int) -> timedelta:
        """The pause after the ``attempts``-th failed attempt."""
        pause = min(self.first * self.backoff ** max(0, attempts - 1), self.cap)
        return pause * (1 + random.random() * 0.2)

    def next_attempt(self, attempts: int, created_at: datetime, now: datetime) -> datetime | None:
        """When to try again after the ``attempts``-th attempt failed; None: give up."""
        if self.attempts is not None and attempts >= self.attempts:
            return None
        at = now + self.delay(attempts)
        if self.within is not None and at > created_at + self.within:
            return None
        return at


@dataclass(frozen=True)
class Sent:
    """An attempt that delivered: ``status`` sent (or sink), the answer's HTTP status if any;
    the provider that took it and the id it gave the message (its delivery reports name
    it: messaging.reports), and the parts it is billed as (an SMS's; 1 for WhatsApp)."""

    status: str = Delivery.Status.SENT
    status_code: int | None = None
    duration_ms: int = 0
    provider: str = ""
    message_id: str = ""
    parts: int = 0


class Failed(Exception):
    """An attempt that did not deliver. ``permanent``: trying again cannot help (a refused
    address, a disabled endpoint); ``status_code``: the answer, if there was one."""

    def __init__(self, message: str, *, permanent: bool = False, status_code: int | None = None, duration_ms=0):
        super().__init__(message)
        self.permanent = permanent
        self.status_code = status_code
        self.duration_ms = duration_ms


class Dropped(Exception):
    """The delivery has nowhere to go any more (what it sends, or where, was deleted): it
    is deleted rather than tried again for ever."""


@dataclass(frozen=True)
class Outcome:
    """An attempt as recorded: what it came to, and what follows (``status``, ``retry_at``)."""

    error: str  # empty: delivered
    status: str
    retry_at: datetime | None = None
    status_code: int | None = None
    duration_ms: int = 0
    permanent: bool = False

    @property
    def succeeded(self) -> bool:
        return not self.error


class Transport:
    """A channel's way of sending. Subclasses set ``channel``, ``label`` and ``send``."""

    channel = ""
    label = ""
    # Lanes bound how many of a channel's deliveries one dispatcher sends at once, so that
    # a slow party holds its own lane only (messaging.outbox): one lane per destination
    # (each webhook endpoint is a party of its own), or one for the channel (every email
    # goes through the one SMTP server, every text through the one provider).
    lane_per_destination = False

    def retry(self) -> Retry:
        raise NotImplementedError

    def send(self, delivery: Delivery) -> Sent:
        """Send ``delivery`` once. Raises Failed, or Dropped."""
        raise NotImplementedError

    def recorded(self, delivery: Delivery, outcome: Outcome) -> None:
        """Record what the channel keeps of an attempt, in the transaction that records it."""

    def sweep(self, now: datetime) -> None:
        """Tidy what the channel keeps past its time; the outbox's sweep calls it first."""

    def lane(self, destination: str) -> str:
        return f"{self.channel}:{destination}" if self.lane_per_destination else self.channel


class ToCustomer(Transport):
    """A receipt to its customer: at most RECECO_DELIVERY_MAX_ATTEMPTS attempts, after
    1, 4, 16, 64 minutes … (at most 6 hours); a test receipt goes to the sink."""

    def retry(self) -> Retry:
        return Retry(timedelta(minutes=1), 4, timedelta(hours=6), attempts=settings.RECECO_DELIVERY_MAX_ATTEMPTS)

    def send(self, delivery: Delivery) -> Sent:
        if not delivery.destination:  # erased while it was being sent (messaging.erasure)
            raise Failed(ERASED, permanent=True)
        sink = delivery.receipt.is_test
        taken = self._send(delivery, sink=sink)
        if sink:
            return Sent(Delivery.Status.SINK)
        return Sent(provider=taken.provider, message_id=taken.message_id, parts=taken.parts) if taken else Sent()

    def _send(self, delivery: Delivery, *, sink: bool) -> Taken | None:
        """Send, or hand to the sink; what the provider said of it (None: nothing said)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Taken:
    """What a provider said of a message it took: its name, its id for it, the parts billed."""

    provider: str = ""
    message_id: str = ""
    parts: int = 0


class EmailTransport(ToCustomer):
    """SMTP, or a provider's HTTP API (django-anymail: RECECO_EMAIL_PROVIDER), which gives
    each message an id its tracking webhooks name."""

    channel, label = EMAIL, "Email"

    def _send(self, delivery: Delivery, *, sink: bool) -> Taken | None:
        message = compose_email(delivery.receipt, delivery.destination)
        try:
            message.connection = get_connection(settings.RECECO_SINK_EMAIL_BACKEND if sink else None)
            message.send()
        except (smtplib.SMTPRecipientsRefused, AnymailRecipientsRefused) as exc:
            raise Failed(describe(exc, delivery), permanent=True) from None
        except AnymailAPIError as exc:
            # The provider's answer: a 4xx other than 408 and 429 will not change if sent again.
            status = exc.status_code
            permanent = status is not None and 400 <= status < 500 and status not in (408, 429)
            raise Failed(describe(exc, delivery), permanent=permanent, status_code=status) from None
        except (smtplib.SMTPException, OSError, AnymailError) as exc:
            raise Failed(describe(exc, delivery)) from None
        status = getattr(message, "anymail_status", None)  # set by anymail's backends only
        if sink or status is None or not isinstance(status.message_id, str):
            return None
        return Taken(settings.RECECO_EMAIL_PROVIDER, status.message_id)


class SmsTransport(ToCustomer):
    channel, label = SMS, "SMS"

    def _send(self, delivery: Delivery, *, sink: bool) -> Taken | None:
        backend = sms.get_backend(settings.RECECO_SINK_SMS_BACKEND if sink else None)
        body = compose_sms(delivery.receipt, delivery.destination)
        message = sms.SmsMessage(
            to=delivery.destination,
            body=body,
            idempotency_key=f"receco-delivery-{delivery.pk}",
            sender=channels.sender_id(delivery.merchant_id),
            status_callback=channels.callback_url("twilio"),
        )
        try:
            accepted = backend.send(message)
        except sms.SmsError as exc:
            raise Failed(describe(exc, delivery), permanent=exc.permanent) from None
        if accepted is None:
            return Taken(parts=gsm.parts(body))
        return Taken(accepted.provider, accepted.message_id, gsm.parts(body))


def describe(exc: BaseException, delivery: Delivery) -> str:
    """``ExceptionClass: message`` with the destination masked: SMTP errors quote addresses."""
    return scrub(f"{type(exc).__name__}: {exc}", delivery)[:MAX_ERROR_LENGTH]


def scrub(text: str, delivery: Delivery) -> str:
    """``text`` with ``delivery``'s email address or phone number masked wherever it appears."""
    if not delivery.receipt_id or not delivery.destination:
        return text
    text = text.replace(delivery.destination, delivery.masked_destination)
    if delivery.channel == EMAIL:
        local_part = delivery.destination.rpartition("@")[0]
        if len(local_part) > 2:
            text = text.replace(local_part, local_part[:1] + "*******")
    else:
        # Numbers are also quoted without their "+" or in national form.
        text = text.replace(delivery.destination.lstrip("+"), delivery.masked_destination)
    return text


_TRANSPORTS: dict[str, Transport] = {}


def register(transport: Transport) -> None:
    """Send the deliveries of ``transport.channel`` with ``transport`` (an app's ``ready()``)."""
    _TRANSPORTS[transport.channel] = transport


def registered() -> list[Transport]:
    """Every registered transport."""
    return list(_TRANSPORTS.values())


def transport(channel: str) -> Transport:
    """The transport of ``channel``. Raises LookupError for a channel none registered."""
    try:
        return _TRANSPORTS[channel]
    except KeyError:
        raise LookupError(f"no transport for channel {channel!r}") from None


def lanes(destinations: list[tuple[str, str]]) -> list[str]:
    """The lane of each (channel, destination)."""
    return [transport(channel).lane(destination) for channel, destination in destinations]
