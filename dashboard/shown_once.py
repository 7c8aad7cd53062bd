"""A new API key, from the POST that made it to the page that shows it, once.

The POST (creating or rotating a key) answers with a redirect (post, redirect, get), so
that reloading the page that shows the key makes no second key. The key crosses the
redirect split in two, neither half of which is the key: the session holds it masked by a
one-time pad (XOR with random bytes as long as the key), and the pad is a cookie of the
browser that made it, kept for a few minutes, for the key pages' path only. The database
(sessions included) never holds the key, as merchants.keys promises; the page that shows it
takes both halves, so that a reload finds neither and shows no key.
"""

import secrets
from base64 import urlsafe_b64decode, urlsafe_b64encode

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

SESSION_KEY = "receco_new_api_key"
PAD_COOKIE = "receco_key_pad"
COOKIE_AGE = 300  # seconds: the redirect is followed at once; a browser closed meanwhile loses the key


def hand_over(request: HttpRequest, response: HttpResponse, api_key_pk: int, key: str, **shown) -> None:
    """Keep ``key`` of the key ``api_key_pk`` for the next page of this browser, with what
    that page says of it (``shown``: JSON values)."""
    raw = key.encode()
    pad = secrets.token_bytes(len(raw))
    masked = bytes(a ^ b for a, b in zip(raw, pad, strict=True))
    request.session[SESSION_KEY] = {"pk": api_key_pk, "masked": _text(masked), **shown}
    response.set_cookie(
        PAD_COOKIE,
        _text(pad),
        max_age=COOKIE_AGE,
        path=_keys_path(),
        secure=request.is_secure(),
        httponly=True,
        samesite="Strict",
    )


def take(request: HttpRequest, api_key_pk: int) -> tuple[str, dict] | None:
    """The key handed over for ``api_key_pk`` and what to say of it, or None (already shown,
    another key's, or the pad's cookie gone). The session forgets it; ``forget`` has the
    browser drop the pad."""
    kept = request.session.pop(SESSION_KEY, None)
    pad = request.COOKIES.get(PAD_COOKIE)
    if not kept or kept.get("pk") != api_key_pk or not pad:
        return None
    try:
        masked, pad_bytes = _bytes(kept.pop("masked")), _bytes(pad)
    except ValueError:
        return None
    if len(masked) != len(pad_bytes):
        return None
    kept.pop("pk")
    return bytes(a ^ b for a, b in zip(masked, pad_bytes, strict=True)).decode(), kept


def forget(response: HttpResponse) -> None:
    """Have the browser drop the pad: sent with whatever answers the page that shows the key."""
    response.delete_cookie(PAD_COOKIE, path=_keys_path(), samesite="Strict")


def _keys_path() -> str:
    # The key pages only: no other page of the site is sent the pad.
    return reverse("admin:merchants_apikey_changelist")


def _text(data: bytes) -> str:
    return urlsafe_b64encode(data).decode()


def _bytes(text: str) -> bytes:
    return urlsafe_b64decode(text.encode())
