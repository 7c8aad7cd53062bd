"""Providers' delivery reports, each at its own URL (docs/delivery.md): HTTP in, a call of
messaging.reports out. Each view checks its provider's signature or secret exactly as
the provider documents it, and answers 403 without changing anything when it does not
hold; a report of a message not known here is answered 200 all the same, so that the
provider does not send it again and again. Parsing and checking are the providers'
modules' (messaging.providers); these views only read the request."""

from __future__ import annotations

import hmac
import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods, require_POST

from callbacks.guard import guarded
from messaging import reports
from messaging.providers import africastalking, termii, twilio, whatsapp

OK = "OK\n"


def _text(body: str, status: int = 200) -> HttpResponse:
    return HttpResponse(body, status=status, content_type="text/plain")


def _refused() -> HttpResponse:
    return _text("Signature does not match\n", 403)


def _record(provider: str, found: tuple[str, str, str] | None) -> None:
    if found is not None:
        reports.record(provider, *found)


@guarded
@require_POST
def twilio_status(request: HttpRequest) -> HttpResponse:
    """Twilio's status callback: a form, signed in X-Twilio-Signature over the URL it was sent to."""
    url = settings.RECECO_WEB_URL + request.get_full_path()
    form = {key: request.POST.get(key) for key in request.POST}
    if not twilio.valid_signature(url, form, request.headers.get("X-Twilio-Signature", "")):
        return _refused()
    _record(twilio.PROVIDER, twilio.report(request.POST))
    return _text(OK)


@guarded
@require_POST
def africastalking_report(request: HttpRequest, secret: str) -> HttpResponse:
    """Africa's Talking's delivery report: a form, at the secret URL registered in its dashboard."""
    expected = settings.RECECO_AFRICASTALKING_CALLBACK_SECRET
    if not expected or not hmac.compare_digest(expected.encode(), secret.encode()):
        return _refused()
    _record(africastalking.PROVIDER, africastalking.report(request.POST))
    return _text(OK)


@guarded
@require_POST
def termii_report(request: HttpRequest) -> HttpResponse:
    """Termii's delivery report: JSON, its HMAC-SHA512 in X-Termii-Signature."""
    body = request.body
    if not termii.valid_signature(body, request.headers.get(termii.SIGNATURE_HEADER, "")):
        return _refused()
    data = _json(body)
    if data is None:
        return _text("Body is not a JSON object\n", 400)
    _record(termii.PROVIDER, termii.report(data))
    return _text(OK)


@guarded
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request: HttpRequest) -> HttpResponse:
    """WhatsApp's webhook: GET verifies the subscription; POST brings statuses, signed in X-Hub-Signature-256."""
    if request.method == "GET":
        query = request.GET
        challenge = whatsapp.verified_challenge(
            query.get("hub.mode", ""), query.get("hub.verify_token", ""), query.get("hub.challenge", "")
        )
        return _refused() if challenge is None else _text(challenge)
    body = request.body
    if not whatsapp.valid_signature(body, request.headers.get(whatsapp.SIGNATURE_HEADER, "")):
        return _refused()
    data = _json(body)
    if data is None:
        return _text("Body is not a JSON object\n", 400)
    for found in whatsapp.reports(data):
        _record(whatsapp.PROVIDER, found)
    return _text(OK)


def _json(body: bytes) -> dict | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
