"""Receipts on WhatsApp: the WhatsApp Business Cloud API's template messages, by plain
HTTP to its documented Graph API (one request shape; no SDK needed).

A receipt goes as the operator's approved *utility* template RECECO_WHATSAPP_TEMPLATE
in RECECO_WHATSAPP_TEMPLATE_LANGUAGE, its body's four parameters the shop's name, the
total, the receipt's link and the "Not your receipt?" link (receipts.rendering.messages), and
nothing promotional: POST https://graph.facebook.com/<version>/<phone number id>/messages
with ``Authorization: Bearer <RECECO_WHATSAPP_ACCESS_TOKEN>``, answered with the
message's ``wamid`` id. Only to a customer who asked for WhatsApp (the delivery's opt-in).

Its status webhooks come to /callbacks/whatsapp/: a GET to verify the subscription
(``hub.verify_token``) and POSTs signed in X-Hub-Signature-256 ("sha256=" and the hex
HMAC-SHA256 of the body with the app's secret): ``valid_signature``, ``reports``.
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

from messaging import channels
from messaging.models import WHATSAPP, Delivery, Report
from messaging.providers.http import Unreachable, post_json, refused_for_good
from messaging.transports import Failed, Taken, ToCustomer, describe
from receipts.rendering.messages import whatsapp_parameters

PROVIDER = "whatsapp"
GRAPH_URL = "https://graph.facebook.com"
SIGNATURE_HEADER = "X-Hub-Signature-256"
# Graph API error codes worth trying again: throttling (4, 80007, 130429, 131056) and
# Meta's own trouble (1, 2, 131000, 131016). Any other refusal (an undeliverable or
# unknown number, a template that is missing or does not fit) is given up.
RETRY_CODES = {1, 2, 4, 80007, 130429, 131000, 131016, 131056}
STATUSES = {"sent": Report.SENT, "delivered": Report.DELIVERED, "read": Report.READ, "failed": Report.FAILED}


class WhatsAppTransport(ToCustomer):
    """The whatsapp channel: one lane (the one Cloud API), the back-off of email and SMS."""

    channel, label = WHATSAPP, "WhatsApp"

    def _send(self, delivery: Delivery, *, sink: bool) -> Taken | None:
        if sink:
            return None  # a test receipt: composed, never sent
        if not channels.whatsapp_configured():
            raise Failed("WhatsApp is not configured (RECECO_WHATSAPP_PHONE_NUMBER_ID)", permanent=True)
        parameters = whatsapp_parameters(delivery.receipt, delivery.destination)
        body = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": delivery.destination.lstrip("+"),
            "type": "template",
            "template": {
                "name": settings.RECECO_WHATSAPP_TEMPLATE,
                "language": {"code": settings.RECECO_WHATSAPP_TEMPLATE_LANGUAGE},
                "components": [{"type": "body", "parameters": [{"type": "text", "text": text} for text in parameters]}],
            },
        }
        url = f"{GRAPH_URL}/{settings.RECECO_WHATSAPP_API_VERSION}/{settings.RECECO_WHATSAPP_PHONE_NUMBER_ID}/messages"
        headers = {"Authorization": f"Bearer {settings.RECECO_WHATSAPP_ACCESS_TOKEN}"}
        try:
            answer = post_json(url, body, headers=headers, timeout=settings.RECECO_WHATSAPP_TIMEOUT)
        except Unreachable as exc:
            raise Failed(describe(exc, delivery)) from None
        if not 200 <= answer.status < 300:
            raise _refusal(answer.status, answer.data.get("error"))
        try:
            message_id = str(answer.data["messages"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise Failed("WhatsApp answered without a message id", status_code=answer.status) from None
        return Taken(PROVIDER, message_id, 1)


def _refusal(status: int, error: object) -> Failed:
    """Failed for an answer that is not 2xx: its code and title only (its message may quote the number)."""
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    words = f"WhatsApp answered HTTP {status}" + (f" (error {code})" if isinstance(code, int) else "")
    permanent = code not in RETRY_CODES and refused_for_good(status)
    return Failed(words, permanent=permanent, status_code=status)


def valid_signature(body: bytes, header: str) -> bool:
    """Whether ``header`` (X-Hub-Signature-256) is "sha256=" and the HMAC-SHA256 of ``body``
    with RECECO_WHATSAPP_APP_SECRET."""
    secret = settings.RECECO_WHATSAPP_APP_SECRET
    scheme, _, signature = (header or "").partition("=")
    if not secret or scheme != "sha256" or not signature:
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.strip().lower())


def verified_challenge(mode: str, token: str, challenge: str) -> str | None:
    """The challenge to answer a subscription's verification with, or None when it is not ours."""
    expected = settings.RECECO_WHATSAPP_VERIFY_TOKEN
    if mode == "subscribe" and expected and hmac.compare_digest(expected.encode(), (token or "").encode()):
        return challenge
    return None


def reports(data: dict) -> list[tuple[str, str, str]]:
    """Each status of a webhook's body as (message id, Report, reason); other changes
    (incoming messages) are left out."""
    found = []
    for entry in data.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            for status in ((change or {}).get("value") or {}).get("statuses") or []:
                report = STATUSES.get(str(status.get("status", "")))
                if report is None or not status.get("id"):
                    continue
                reason = ""
                if report == Report.FAILED:
                    errors = status.get("errors") or [{}]
                    reason = f"{errors[0].get('code', '')} {errors[0].get('title', '')}".strip() or "no reason given"
                found.append((str(status["id"]), report, reason))
    return found
