"""Sending a sign-in's code or link: the outbox's transport of the locker's two channels
(registered in LockerConfig.ready(), as webhooks register theirs).

Here, in the outbox and never in the request that asked, the locker decides whether to
send: only to a contact that at least one live receipt was sent to. A sign-in of any
other contact is dropped and its contact blanked, so that asking takes the same time
and gets the same answer whatever the contact (locker.signins). Each text spends the
service's budget of sign-in texts (locker.limits) as it is sent; once that is spent, a
text is dropped.
"""

from __future__ import annotations

import smtplib
from datetime import timedelta
from email.utils import formataddr, parseaddr

from django.conf import settings
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.utils import timezone

from locker import limits, listing, signins
from locker.contacts import EMAIL, SMS, Contact
from locker.models import SignIn
from messaging import sms
from messaging.models import Delivery
from messaging.transports import MAX_ERROR_LENGTH, Dropped, Failed, Retry, Sent, Transport
from receipts.contacts import mask_destination

SMS_CHANNEL = signins.CHANNELS[SMS]
EMAIL_CHANNEL = signins.CHANNELS[EMAIL]
_KIND = {SMS_CHANNEL: SMS, EMAIL_CHANNEL: EMAIL}
NOTHING_TO_SEND = "no sign-in to send: used, expired, or nothing to show"
TEXTS_SPENT = "not sent: the service's budget of sign-in texts is spent (RECECO_LOCKER_TEXT_RATE)"


class SignInTransport(Transport):
    """A code by text message or a link by email, tried again after 30 seconds, 1, 2, 2
    minutes… while the code or link is valid."""

    def __init__(self, channel: str):
        self.channel = channel
        self.kind = _KIND[channel]
        self.label = "Sign-in code" if self.kind == SMS else "Sign-in link"

    def retry(self) -> Retry:
        valid = signins.CODE_VALID if self.kind == SMS else signins.LINK_VALID
        return Retry(timedelta(seconds=30), 2, timedelta(minutes=2), within=valid)

    def send(self, delivery: Delivery) -> Sent:
        signin = SignIn.objects.filter(pk=delivery.payload_id, kind=self.kind).first()
        if signin is None or not signin.contact or signin.expires_at <= timezone.now():
            raise Dropped(NOTHING_TO_SEND)
        contact = Contact(self.kind, signin.contact)
        if not listing.has_receipts(contact):
            SignIn.objects.filter(pk=signin.pk).update(contact="")
            raise Dropped(NOTHING_TO_SEND)
        if self.kind == SMS and not limits.spend_text():
            # The service's texts budget is spent (RECECO_LOCKER_TEXT_RATE): the form
            # refuses codes until it is not; this one, asked just before, goes unsent.
            raise Dropped(TEXTS_SPENT)
        try:
            if self.kind == SMS:
                _text(signin, delivery)
            else:
                _email(signin)
        except smtplib.SMTPRecipientsRefused as exc:
            raise Failed(_scrubbed(exc, contact), permanent=True) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise Failed(_scrubbed(exc, contact)) from None
        except sms.SmsError as exc:
            raise Failed(_scrubbed(exc, contact), permanent=exc.permanent) from None
        return Sent()


def sms_text(signin: SignIn) -> str:
    """The text: the code, what it is for, and the line (WebOTP) that lets a phone's
    browser offer it for the code field."""
    code = signins.code_of(signin)
    host = settings.RECECO_WEB_URL.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
    minutes = int(signins.CODE_VALID.total_seconds() // 60)
    return (
        f"{code} is your Receco code to see your receipts. Valid {minutes} minutes. Never share it.\n\n@{host} #{code}"
    )


def _text(signin: SignIn, delivery: Delivery) -> None:
    message = sms.SmsMessage(to=signin.contact, body=sms_text(signin), idempotency_key=f"receco-delivery-{delivery.pk}")
    sms.get_backend().send(message)


def _email(signin: SignIn) -> None:
    context = {
        "url": f"{settings.RECECO_WEB_URL}{signins.link_path(signin)}",
        "minutes": int(signins.LINK_VALID.total_seconds() // 60),
    }
    message = EmailMessage(
        subject="Sign in to your receipts",
        body=render_to_string("locker/email/signin.txt", context),
        from_email=formataddr(("Receco", parseaddr(settings.DEFAULT_FROM_EMAIL)[1])),
        to=[signin.contact],
        headers={"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All"},
    )
    message.send()


def _scrubbed(exc: BaseException, contact: Contact) -> str:
    """``ExceptionClass: message`` with the contact masked (SMTP errors quote addresses)."""
    text = f"{type(exc).__name__}: {exc}"
    masked = mask_destination(EMAIL if contact.kind == EMAIL else SMS, contact.value)
    forms = [contact.value, contact.value.lstrip("+")]
    local_part = contact.value.partition("@")[0] if contact.kind == EMAIL else ""
    if len(local_part) > 2:
        forms.append(local_part)
    for form in forms:
        text = text.replace(form, masked)
    return text[:MAX_ERROR_LENGTH]
