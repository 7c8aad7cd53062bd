"""The "Not your receipt?" page every message's link opens (receipts.detach_links): GET
says which receipt and which contact, POST removes the contact from it. No sign-in: the
signed link is the proof that its holder was sent the receipt."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from privacy.erasure import detach
from privacy.models import ErasureRecord
from receco.errors import InvalidInput
from receco.lib.csp import csp
from receipts import detach_links
from receipts.codes import parse_reference
from receipts.contacts import EMAIL_FIELD, mask_email, mask_phone
from receipts.models import Receipt
from receipts.rendering.display import receipt_context

NOT_VALID = "This link is not valid"
EXPIRED = "This link has expired"
# Each state of the page, by its heading.
HEADINGS = {
    "confirm": "Not your receipt?",
    "removed": "Removed from this receipt",
    "already_removed": "Already removed",
    "expired": EXPIRED,
    "not_valid": NOT_VALID,
}


@csp
@require_http_methods(["GET", "HEAD", "POST"])
def not_mine(request: HttpRequest, reference: str) -> HttpResponse:
    key = (request.POST if request.method == "POST" else request.GET).get("k", "")
    try:
        link = detach_links.read(reference, key)
    except detach_links.ExpiredLink:
        return _page(request, "expired", status=410, retention_days=settings.RECECO_CONTACT_RETENTION_DAYS)
    except detach_links.BadLink:
        return _page(request, "not_valid", status=400)
    receipt = _receipt(reference)
    contact = detach_links.names(receipt, link) if receipt is not None else None
    what = "address" if link.field == EMAIL_FIELD else "number"
    if contact is None:
        return _page(request, "already_removed", what=what)
    context = {**receipt_context(receipt), "what": what, "masked": _masked(link.field, contact), "key": key}
    if request.method != "POST":
        return _page(request, "confirm", **context)
    detach(receipt, link.field, contact, via=ErasureRecord.Via.LINK)
    return _page(request, "removed", **context)


def _receipt(short_code: str) -> Receipt | None:
    try:
        return Receipt.objects.by_reference(parse_reference(short_code))
    except (InvalidInput, Receipt.DoesNotExist):  # removed by retention since
        return None


def _masked(field: str, contact: str) -> str:
    return (mask_email if field == EMAIL_FIELD else mask_phone)(contact)


def _page(request: HttpRequest, state: str, status: int = 200, **context) -> HttpResponse:
    context = {**context, "state": state, "heading": HEADINGS[state]}
    response = render(request, "privacy/not_mine.html", context, status=status)
    # Personal (a masked contact, a form's token): never in a shared cache, never indexed.
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response
