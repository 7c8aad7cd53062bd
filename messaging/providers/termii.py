"""Text messages through Termii, by its documented REST API (it has no well-kept SDK).

POST <RECECO_TERMII_BASE_URL>/api/sms/send with a JSON body: ``api_key``, ``to`` (the
number in international form without "+"), ``from`` (the sender id, 3 to 11
characters), ``sms``, ``type`` "plain" and ``channel`` (RECECO_TERMII_CHANNEL: "dnd"
reaches numbers on Do-Not-Disturb, as receipts must; "generic" is for promotions). It
answers its ``message_id``. Its delivery reports come to /callbacks/termii/ as JSON,
signed in X-Termii-Signature: the hex HMAC-SHA512 of the body with the account's secret
key (``valid_signature``).
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

from messaging.models import Report
from messaging.providers.http import Unreachable, post_json, refused_for_good
from messaging.sms import Accepted, SmsError, SmsMessage

PROVIDER = "termii"
SIGNATURE_HEADER = "X-Termii-Signature"
# Its reports' statuses, in the words of its documentation, any case.
STATUSES = {
    "message sent": Report.SENT,
    "delivered": Report.DELIVERED,
    "message failed": Report.FAILED,
    "dnd active on phone number": Report.FAILED,
    "rejected": Report.FAILED,
    "expired": Report.FAILED,
}


class Backend:
    """RECECO_SMS_BACKEND=termii (RECECO_TERMII_API_KEY, RECECO_TERMII_BASE_URL)."""

    def send(self, message: SmsMessage) -> Accepted:
        body = {
            "api_key": settings.RECECO_TERMII_API_KEY,
            "to": message.to.lstrip("+"),
            "from": message.sender or settings.RECECO_SMS_SENDER,
            "sms": message.body,
            "type": "plain",
            "channel": settings.RECECO_TERMII_CHANNEL,
        }
        try:
            answer = post_json(
                f"{settings.RECECO_TERMII_BASE_URL}/api/sms/send", body, timeout=settings.RECECO_SMS_TIMEOUT
            )
        except Unreachable as exc:
            raise SmsError(f"Termii not reachable: {exc}") from None
        if not 200 <= answer.status < 300:
            # Its message may quote the number: only the status is kept.
            raise SmsError(f"Termii answered HTTP {answer.status}", permanent=refused_for_good(answer.status))
        message_id = answer.data.get("message_id")
        if not message_id:
            raise SmsError("Termii answered without a message_id")
        return Accepted(PROVIDER, str(message_id))


def valid_signature(body: bytes, signature: str) -> bool:
    """Whether ``signature`` is the hex HMAC-SHA512 of ``body`` with RECECO_TERMII_SECRET_KEY."""
    secret = settings.RECECO_TERMII_SECRET_KEY
    if not secret or not signature:
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()
    return hmac.compare_digest(expected, signature.strip().lower())


def report(data: dict) -> tuple[str, str, str] | None:
    """A delivery report's (message id, Report, reason); None for one not tracked."""
    raw = str(data.get("status", ""))
    status = STATUSES.get(raw.strip().lower())
    message_id = str(data.get("message_id") or "")
    if status is None or not message_id:
        return None
    return message_id, status, raw if status == Report.FAILED else ""
