"""Proof beyond the password before a second sign-in factor is set up (dashboard.twofactor).

A password alone never sets up an authenticator app: whoever learnt an owner's password
before the owner set one up would otherwise set up their own, and hold the account. A
session may set one up only once it has shown one of these, for that user:

- a set-up link (TwoStepLink) emailed to the user's address, or made by the operator
  (``setuptwostep``) for a user with none, opened while signed in as that user;
- the team invitation the user joined by, accepted in this browser (dashboard.join);
- a code from the app already set up, or a recovery code, to replace the app.

What was shown is kept in the session for PROOF_VALIDITY and spent by the set-up it allows.
"""

import hashlib
import secrets
import time
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from merchants.models import TwoStepLink

EMAIL_VALIDITY = timedelta(hours=1)
OPERATOR_VALIDITY = timedelta(hours=72)
PROOF_VALIDITY = timedelta(minutes=30)
# Set-up emails one user may be sent: a stolen password must not flood the owner's inbox.
EMAIL_RATE = "3/h"

_SESSION_KEY = "receco_two_step_proof"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def make_link(user, validity: timedelta, now: datetime | None = None) -> str:
    """Make a set-up link for ``user`` that works for ``validity`` and return its secret
    (the only copy). The user's earlier links stop working."""
    now = now or timezone.now()
    secret = secrets.token_urlsafe(32)
    with transaction.atomic():
        TwoStepLink.objects.filter(user=user).delete()
        TwoStepLink.objects.create(user=user, digest=_digest(secret), created_at=now, expires_at=now + validity)
    return secret


def link_path(secret: str) -> str:
    """The path of the set-up link with ``secret``. The secret is in the query string,
    which the access log leaves out (gunicorn.conf.py)."""
    return f"{reverse('admin:two_step_link')}?{urlencode({'key': secret})}"


def send_link(user, url: str) -> None:
    """Email ``user`` the set-up link ``url``, saying what to do if they did not ask for it."""
    context = {"user": user, "link": url, "minutes": int(EMAIL_VALIDITY.total_seconds() // 60)}
    body = render_to_string("merchants/two_step_link_email.txt", context)
    send_mail("Set up two-step sign-in to your Receco dashboard", body, settings.DEFAULT_FROM_EMAIL, [user.email])


def link_works(user, secret: str, now: datetime | None = None) -> bool:
    """Whether ``secret`` is an unexpired set-up link of ``user``."""
    link = TwoStepLink.objects.filter(digest=_digest(secret)).first()
    return link is not None and link.user_id == user.pk and (now or timezone.now()) < link.expires_at


def redeem(session, user, secret: str, now: datetime | None = None) -> bool:
    """Use ``user``'s set-up link ``secret``: the session may set up an app. Return False
    (and change nothing) when it is not that user's, was used or has expired."""
    now = now or timezone.now()
    with transaction.atomic():
        link = TwoStepLink.objects.select_for_update().filter(digest=_digest(secret), user=user).first()
        if link is None or now >= link.expires_at:
            return False
        link.delete()
    grant(session, user)
    return True


def grant(session, user) -> None:
    """Let this session set up ``user``'s app within PROOF_VALIDITY."""
    session[_SESSION_KEY] = {"user": user.pk, "until": time.time() + PROOF_VALIDITY.total_seconds()}


def proven(session, user) -> bool:
    """Whether this session has shown proof, still fresh, for ``user``."""
    proof = session.get(_SESSION_KEY)
    return bool(proof) and proof.get("user") == user.pk and time.time() < proof.get("until", 0)


def spend(session) -> None:
    """The set-up the proof allowed is done: the next one needs proof again."""
    session.pop(_SESSION_KEY, None)
