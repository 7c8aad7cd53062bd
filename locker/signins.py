"""Proving a contact: a 6-digit code texted to a number, or a single-use link emailed to
an address, each sent by the outbox (locker.transport) and checked here.

The code and the link's secret are never stored: each is an HMAC of the sign-in's id and
random nonce under the server's secret, made again to send and to check. A code is
valid CODE_VALID and allows MAX_TRIES wrong ones; a link is valid LINK_VALID and works
once. A sign-in that succeeds is deleted, and so is its contact with it; asking again
for the same contact deletes its earlier sign-ins: only the newest code or link works.
The browser that asked finds its sign-in by the digest of a random token in its cookie
(locker.sessions), never by the sign-in's id.

Asking costs the same whether or not any receipt was sent to the contact: a row and a
pending delivery, always. Whether to send is decided in the outbox (locker.transport),
which blanks the contact of a sign-in with nothing to show: such a sign-in then refuses
every code as a wrong one, so no answer tells the two apart.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from locker.contacts import EMAIL, SMS, Contact
from locker.models import SignIn
from messaging import outbox

CODE_VALID = timedelta(minutes=10)
LINK_VALID = timedelta(minutes=15)
MAX_TRIES = 5
CODE_DIGITS = 6

# The outbox's channels of the locker's messages (locker.transport).
CHANNELS = {SMS: "signin-sms", EMAIL: "signin-email"}


class SignInFailed(Exception):
    """A code or link refused: ``message`` in a customer's words, ``status`` the page's."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


CODE_GONE = "This code has expired or was already used. Ask for a new code."
LINK_GONE = "This sign-in link has expired or was already used. Ask for a new one."
TOO_MANY_TRIES = "Too many wrong codes. Ask for a new code."


def start(contact: Contact, browser: str, now: datetime | None = None) -> SignIn:
    """Record a sign-in of ``contact`` for the browser whose cookie's token has the digest
    ``browser``, retire the contact's earlier ones, and hand the outbox its code or link;
    return it."""
    now = now or timezone.now()
    valid = CODE_VALID if contact.kind == SMS else LINK_VALID
    with transaction.atomic():
        purge(now)
        # A new code retires the old ones: texts still on their way then carry dead codes.
        SignIn.objects.filter(contact=contact.value).delete()
        signin = SignIn.objects.create(
            kind=contact.kind,
            contact=contact.value,
            masked=contact.masked,
            browser=browser,
            nonce=secrets.token_hex(16),
            expires_at=now + valid,
        )
        # The destination is the sign-in: the transport reads the contact from it, so the
        # outbox keeps no number or address once the sign-in is gone.
        outbox.add(CHANNELS[contact.kind], None, str(signin.pk), payload_id=signin.pk)
    return signin


def purge(now: datetime | None = None) -> int:
    """Delete the sign-ins that have expired, contacts with them; return how many."""
    deleted, _ = SignIn.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def waiting(browser: str | None) -> SignIn | None:
    """The sign-in the browser whose cookie's token has the digest ``browser`` waits for,
    expired or not, while it is kept; None once it is used, retired or purged."""
    return SignIn.objects.filter(browser=browser).first() if browser else None


def forget_contact(contact: Contact) -> int:
    """Delete every sign-in of ``contact`` (erasure); return how many."""
    deleted, _ = SignIn.objects.filter(contact=contact.value).delete()
    return deleted


def _secret(signin: SignIn, purpose: str) -> bytes:
    return salted_hmac(f"receco.locker.{purpose}", f"{signin.pk}:{signin.nonce}", algorithm="sha256").digest()


def code_of(signin: SignIn) -> str:
    """The 6-digit code of a text-message sign-in."""
    number = int.from_bytes(_secret(signin, "code")[:8], "big") % 10**CODE_DIGITS
    return f"{number:0{CODE_DIGITS}d}"


def link_path(signin: SignIn) -> str:
    """The path of an email sign-in's link (under RECECO_WEB_URL)."""
    return reverse("locker:link", kwargs={"pk": signin.pk, "secret": _link_secret(signin)})


def _link_secret(signin: SignIn) -> str:
    return _secret(signin, "link")[:20].hex()


@dataclass(frozen=True)
class _Outcome:
    contact: Contact | None = None
    failure: SignInFailed | None = None


def check_code(browser: str, typed: str, now: datetime | None = None) -> Contact:
    """The contact proven by ``typed``, the code of the sign-in the browser ``browser``
    (locker.sessions.awaited) waits for; the sign-in is then deleted (a code works once).
    A wrong code counts a try, kept whatever follows.

    Raises SignInFailed: expired, used or unknown; wrong (with the tries left); too many
    wrong codes (status 429)."""
    now = now or timezone.now()
    with transaction.atomic():
        outcome = _check_code(browser, typed, now)
    if outcome.failure is not None:
        raise outcome.failure
    return outcome.contact


def _check_code(browser: str, typed: str, now: datetime) -> _Outcome:
    signin = SignIn.objects.select_for_update().filter(browser=browser, kind=SMS, expires_at__gt=now).first()
    if signin is None:
        return _Outcome(failure=SignInFailed(CODE_GONE))
    if signin.tries >= MAX_TRIES:
        return _Outcome(failure=SignInFailed(TOO_MANY_TRIES, 429))
    # Compared whether or not the sign-in has a contact, so that one with nothing to show
    # takes as long to refuse as any other.
    right = hmac.compare_digest(code_of(signin), typed) and bool(signin.contact)
    if right:
        signin.delete()
        return _Outcome(contact=Contact(SMS, signin.contact))
    signin.tries += 1
    signin.save(update_fields=["tries"])
    left = MAX_TRIES - signin.tries
    if not left:
        return _Outcome(failure=SignInFailed(TOO_MANY_TRIES, 429))
    return _Outcome(failure=SignInFailed(f"That code is not right. {left} {'try' if left == 1 else 'tries'} left."))


def find_link(pk: int, secret: str, now: datetime | None = None) -> SignIn:
    """The email sign-in a link names, still valid. Raises SignInFailed."""
    now = now or timezone.now()
    signin = SignIn.objects.filter(pk=pk, kind=EMAIL, expires_at__gt=now).first()
    expected = _link_secret(signin) if signin is not None else secrets.token_hex(20)
    if signin is None or not hmac.compare_digest(expected, secret) or not signin.contact:
        raise SignInFailed(LINK_GONE)
    return signin


def use_link(pk: int, secret: str, now: datetime | None = None) -> Contact:
    """The contact proven by a sign-in link; the sign-in is deleted (a link works once).
    Raises SignInFailed."""
    now = now or timezone.now()
    signin = find_link(pk, secret, now)
    # Deleted by one request only, when two arrive at once.
    deleted, _ = SignIn.objects.filter(pk=signin.pk).delete()
    if not deleted:
        raise SignInFailed(LINK_GONE)
    return Contact(EMAIL, signin.contact)
