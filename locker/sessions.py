"""Who this browser proved it is: the locker's session, a signed cookie on the customer's
own device (HttpOnly, Secure where the site is https, SameSite=Lax, 30 days), holding the
contact and its generation (locker.models.Generation). "Sign out everywhere" and erasure
move the generation on, which ends every session of the contact at its next request.

A second cookie says which sign-in this browser is waiting for (its id, the kind and the
contact masked, for the page that asks for the code), for as long as a link is valid.
"""

from __future__ import annotations

import json
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.db.models import F
from django.http import HttpRequest, HttpResponse

from locker import signins
from locker.contacts import EMAIL, SMS, Contact
from locker.models import Generation

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


def generation(contact: Contact) -> int:
    found = Generation.objects.filter(digest=contact.digest).values_list("generation", flat=True).first()
    return found or 0


def sign_in(response: HttpResponse, contact: Contact) -> None:
    """Start a session of ``contact`` on this browser; the waiting sign-in is forgotten."""
    value = {"k": contact.kind, "c": contact.value, "g": generation(contact)}
    _set(response, COOKIE, value, SALT, MAX_AGE)
    response.delete_cookie(PENDING_COOKIE, path=PATH)


def current(request: HttpRequest) -> Contact | None:
    """The contact this browser's session proved, if it is still valid (one query)."""
    value = _read(request, COOKIE, SALT, MAX_AGE)
    if value is None or value.get("k") not in (SMS, EMAIL) or not isinstance(value.get("c"), str):
        return None
    contact = Contact(value["k"], value["c"])
    return contact if value.get("g") == generation(contact) else None


def sign_out(response: HttpResponse) -> None:
    """End this browser's session."""
    response.delete_cookie(COOKIE, path=PATH, samesite="Lax")


def sign_out_everywhere(contact: Contact) -> None:
    """End every session of ``contact``, on every device."""
    Generation.objects.get_or_create(digest=contact.digest)
    Generation.objects.filter(digest=contact.digest).update(generation=F("generation") + 1)


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
