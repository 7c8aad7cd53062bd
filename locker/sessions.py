"""Who this browser proved it is: the locker's session.

Its cookie (``receco_locker``: HttpOnly, Secure where the site is https, SameSite=Lax,
path /app/my, 30 days) holds a random token and nothing else. The database keeps the
token's SHA-256 and the contact proven (locker.models.Session) while the session lives,
and every locker page finds it by that (one query). "Sign out" deletes this browser's
session; "Sign out everywhere" and erasure delete every session of the contact, which
ends them on every device: what their cookies still hold is a random value that names
nothing. An expired session is deleted by the next sign-in or the daily retention run
(locker.retention), whichever comes first.

A second cookie (``receco_locker_signin``) says which sign-in this browser waits for: a
random token too, whose SHA-256 the sign-in keeps (locker.signins), for as long as a
link is valid.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from locker import signins
from locker.contacts import Contact
from locker.models import Session

COOKIE = "receco_locker"
MAX_AGE = timedelta(days=30)
PENDING_COOKIE = "receco_locker_signin"
PATH = "/app/my"


def new_token() -> tuple[str, str]:
    """A random token for a cookie, and the SHA-256 (hex) the database keeps of it."""
    token = secrets.token_urlsafe(32)
    return token, digest(token)


def digest(token: str) -> str:
    """The SHA-256 of a cookie's token, as the database keeps it. The token is random
    (256 bits), so a plain hash of it is as good as a keyed one."""
    return hashlib.sha256(token.encode()).hexdigest()


def _set(response: HttpResponse, name: str, token: str, max_age: timedelta) -> None:
    response.set_cookie(
        name,
        token,
        max_age=int(max_age.total_seconds()),
        path=PATH,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _token(request: HttpRequest, name: str) -> str | None:
    token = request.COOKIES.get(name, "")
    return token if 0 < len(token) <= 128 else None


def purge(now: datetime | None = None) -> int:
    """Delete the sessions that have expired; return how many."""
    deleted, _ = Session.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def sign_in(response: HttpResponse, contact: Contact) -> None:
    """Start a session of ``contact`` on this browser; the waiting sign-in is forgotten.
    Expired sessions (of anyone) are deleted on the way."""
    now = timezone.now()
    purge(now)
    token, token_digest = new_token()
    Session.objects.create(
        token_digest=token_digest, kind=contact.kind, contact=contact.value, expires_at=now + MAX_AGE
    )
    _set(response, COOKIE, token, MAX_AGE)
    response.delete_cookie(PENDING_COOKIE, path=PATH, samesite="Lax")


def current(request: HttpRequest) -> Contact | None:
    """The contact this browser's session proved, if it is still valid (one query)."""
    token = _token(request, COOKIE)
    if token is None:
        return None
    found = (
        Session.objects.filter(token_digest=digest(token), expires_at__gt=timezone.now())
        .values_list("kind", "contact")
        .first()
    )
    return Contact(*found) if found else None


def has_cookie(request: HttpRequest) -> bool:
    """Whether this browser still holds a session cookie, valid or not."""
    return COOKIE in request.COOKIES


def sign_out(request: HttpRequest, response: HttpResponse) -> None:
    """End this browser's session: its row and its cookie."""
    token = _token(request, COOKIE)
    if token is not None:
        Session.objects.filter(token_digest=digest(token)).delete()
    response.delete_cookie(COOKIE, path=PATH, samesite="Lax")


def sign_out_everywhere(contact: Contact) -> int:
    """End every session of ``contact``, on every device; return how many."""
    deleted, _ = Session.objects.filter(contact=contact.value).delete()
    return deleted


def await_signin(response: HttpResponse, token: str) -> None:
    """Remember on this browser the sign-in it waits for, by the token whose digest the
    sign-in keeps (``new_token``)."""
    _set(response, PENDING_COOKIE, token, signins.LINK_VALID)


def awaited(request: HttpRequest) -> str | None:
    """The digest by which the sign-in this browser waits for is found, or None when it
    waits for none."""
    token = _token(request, PENDING_COOKIE)
    return digest(token) if token is not None else None
