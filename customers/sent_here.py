"""What this browser asked to be sent: the receipt page lists those deliveries to the
browser that asked for them, and to nobody else who opens the receipt.

Kept in a signed cookie on the customer's own browser (delivery ids per receipt token),
so the service stores nothing more about who asked; a forged or stale cookie is ignored.
"""

import json

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from messaging.models import Delivery
from receipts.models import Receipt

COOKIE = "receco_sent"
SALT = "customers.sent_here"
MAX_AGE = 30 * 86400
# The receipts remembered at once; the oldest are forgotten first.
MAX_RECEIPTS = 20
PATH = "/app/receipt/"


def _remembered(request: HttpRequest) -> dict[str, list[int]]:
    try:
        value = json.loads(request.get_signed_cookie(COOKIE, salt=SALT, max_age=MAX_AGE))
    except (KeyError, signing.BadSignature, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(token): [i for i in ids if isinstance(i, int)] for token, ids in value.items() if isinstance(ids, list)}


def sent_from_here(request: HttpRequest, receipt: Receipt) -> list[Delivery]:
    """The deliveries of ``receipt`` this browser asked for, newest first (at most 5).

    Read from the primary database even when the page's receipt came from a read replica:
    the browser has just asked for them and must see them."""
    ids = _remembered(request).get(receipt.token)
    if not ids:
        return []
    return list(Delivery.objects.filter(receipt_id=receipt.pk, pk__in=ids).order_by("-created_at")[:5])


def remember(request: HttpRequest, response: HttpResponse, receipt: Receipt, wanted: list[tuple[str, str]]) -> None:
    """Add the newest delivery of ``receipt`` to each (channel, destination) in ``wanted``
    to this browser's cookie, on ``response``."""
    ids = []
    for channel, destination in wanted:
        newest = receipt.deliveries.filter(channel=channel, destination=destination).order_by("-created_at").first()
        if newest is not None:
            ids.append(newest.pk)
    remembered = _remembered(request)
    merged = [*remembered.pop(receipt.token, []), *ids]
    remembered[receipt.token] = sorted(set(merged))[-10:]
    kept = dict(list(remembered.items())[-MAX_RECEIPTS:])
    response.set_signed_cookie(
        COOKIE,
        json.dumps(kept, separators=(",", ":")),
        salt=SALT,
        max_age=MAX_AGE,
        path=PATH,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
