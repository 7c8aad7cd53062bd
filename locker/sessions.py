"""Who this browser proved it is: the locker's session, a signed cookie on the customer's
own device (HttpOnly, Secure where the site is https, SameSite=Lax, 30 days), holding the
contact and the contact's session key (locker.models.SessionKey), checked on every
request. "Sign out everywhere" and erasure delete the key, which ends every session of
the contact at its next request; a key is deleted too once no session of it can be alive,
by the next sign-in or the daily retention run (locker.retention), whichever comes first.

A second cookie says which sign-in this browser is waiting for (its id, the kind and the
contact masked, for the page that asks for the code), for as long as a link is valid.
"""

from __future__ import annotations

import hmac
import json
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from locker import signins
from locker.contacts import EMAIL, SMS, Contact
from locker.models import SessionKey

COOKIE = "receco_locker"
SALT = "locker.session"
MAX_AGE = timedelta(days=30)
PENDING_COOKIE = "receco_locker_signin"
PENDING_SALT = "locker.pending"
PATH = "/app/my"


def _set(response: HttpResponse, name: str, value: dict, salt: str, max_age: timedelta) -> None:
    response.set_signed_cookie(
        name,
        json.dumps(value, separators=(",", ":")),
        salt=salt,
        max_age=int(max_age.total_seconds()),
        path=PATH,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _read(request: HttpRequest, name: str, salt: str, max_age: timedelta) -> dict | None:
    try:
        value = json.loads(request.get_signed_cookie(name, salt=salt, max_age=max_age))
    except (KeyError, signing.BadSignature, ValueError):
        return None
    return value if isinstance(value, dict) else None


def purge(now: datetime | None = None) -> int:
    """Delete the session keys no session can carry any more (their last sign-in is older
    than a session lives); return how many."""
    deleted, _ = SessionKey.objects.filter(signed_in_at__lt=(now or timezone.now()) - MAX_AGE).delete()
    return deleted


def _key_for(contact: Contact) -> str:
    """The contact's session key, made at its first sign-in; keys older than any session
    (of any contact) are deleted on the way."""
    now = timezone.now()
    purge(now)
    found, created = SessionKey.objects.get_or_create(
        digest=contact.digest, defaults={"key": secrets.token_hex(16), "signed_in_at": now}
    )
    if not created:
        SessionKey.objects.filter(pk=found.pk).update(signed_in_at=now)
    return found.key


def sign_in(response: HttpResponse, contact: Contact) -> None:
    """Start a session of ``contact`` on this browser; the waiting sign-in is forgotten."""
    value = {"k": contact.kind, "c": contact.value, "s": _key_for(contact)}
    _set(response, COOKIE, value, SALT, MAX_AGE)
    response.delete_cookie(PENDING_COOKIE, path=PATH)


def current(request: HttpRequest) -> Contact | None:
    """The contact this browser's session proved, if it is still valid (one query)."""
    value = _read(request, COOKIE, SALT, MAX_AGE)
    if value is None or value.get("k") not in (SMS, EMAIL) or not isinstance(value.get("c"), str):
        return None
    contact = Contact(value["k"], value["c"])
    key = SessionKey.objects.filter(digest=contact.digest).values_list("key", flat=True).first()
    if key is None or not hmac.compare_digest(key, str(value.get("s"))):
        return None
    return contact


def sign_out(response: HttpResponse) -> None:
    """End this browser's session."""
    response.delete_cookie(COOKIE, path=PATH, samesite="Lax")


def sign_out_everywhere(contact: Contact) -> int:
    """End every session of ``contact``, on every device; return how many keys were deleted."""
    deleted, _ = SessionKey.objects.filter(digest=contact.digest).delete()
    return deleted


def await_signin(response: HttpResponse, signin_pk: int, contact: Contact) -> None:
    """Remember on this browser the sign-in it waits for."""
    _set(response, PENDING_COOKIE, {"id": signin_pk, "k": contact.kind, "m": contact.masked},
         PENDING_SALT, signins.LINK_VALID)  # fmt: skip


def awaited(request: HttpRequest) -> dict | None:
    """The sign-in this browser waits for: ``{"id", "k", "m"}``, or None."""
    value = _read(request, PENDING_COOKIE, PENDING_SALT, signins.LINK_VALID)
    if value is None or not isinstance(value.get("id"), int) or value.get("k") not in (SMS, EMAIL):
        return None
    return value
