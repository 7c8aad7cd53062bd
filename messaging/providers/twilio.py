"""Text messages through Twilio, with its official SDK (``twilio``).

The SDK creates the message (POST /2010-04-01/Accounts/<sid>/Messages.json with the
account's SID and auth token as basic auth) from RECECO_TWILIO_MESSAGING_SERVICE_SID,
or from the merchant's sender id (else RECECO_SMS_SENDER), with a StatusCallback of
/callbacks/twilio/ that Twilio posts each status to, signed in X-Twilio-Signature with
the auth token (checked with the SDK's RequestValidator: ``valid_signature``).

Twilio's documented errors: a number that is not valid, not a mobile, unsubscribed
(STOP) or in a region the account may not send to is given up; 429 (20429, too many
requests) and 5xx are tried again; any other 4xx is given up (it will not change).
"""

from __future__ import annotations

import logging

import requests
from django.conf import settings
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.request_validator import RequestValidator
from twilio.rest import Client

from messaging.models import Report
from messaging.providers.http import refused_for_good
from messaging.sms import Accepted, SmsError, SmsMessage

PROVIDER = "twilio"
# The SDK logs each request and answer at INFO, headers included: kept out of the logs.
_SDK_LOG = logging.getLogger("receco.twilio.sdk")
_SDK_LOG.setLevel(logging.WARNING)
# Twilio's error codes that say the number will never take this message.
GIVE_UP_CODES = {
    21211: "invalid 'To' number",
    21214: "'To' number cannot be reached",
    21408: "permission to send to this region is not enabled",
    21610: "the number unsubscribed (STOP)",
    21612: "cannot route to this number",
    21614: "'To' is not a mobile number",
}
# Status callback's MessageStatus: what this service tracks of them.
STATUSES = {
    "sent": Report.SENT,
    "delivered": Report.DELIVERED,
    "read": Report.READ,
    "undelivered": Report.FAILED,
    "failed": Report.FAILED,
}
# The usual reasons of an undelivered message, as Twilio's error dictionary names them.
DELIVERY_ERRORS = {
    "30003": "Unreachable destination handset",
    "30004": "Message blocked",
    "30005": "Unknown destination handset",
    "30006": "Landline or unreachable carrier",
    "30007": "Message filtered by the carrier",
    "30008": "Unknown error",
}


class Backend:
    """RECECO_SMS_BACKEND=twilio (RECECO_TWILIO_ACCOUNT_SID and _AUTH_TOKEN)."""

    def __init__(self):
        http = TwilioHttpClient(timeout=settings.RECECO_SMS_TIMEOUT, logger=_SDK_LOG)
        self.client = Client(settings.RECECO_TWILIO_ACCOUNT_SID, settings.RECECO_TWILIO_AUTH_TOKEN, http_client=http)

    def send(self, message: SmsMessage) -> Accepted:
        values = {"to": message.to, "body": message.body}
        if settings.RECECO_TWILIO_MESSAGING_SERVICE_SID:
            values["messaging_service_sid"] = settings.RECECO_TWILIO_MESSAGING_SERVICE_SID
        else:
            values["from_"] = message.sender or settings.RECECO_SMS_SENDER
        if message.status_callback:
            values["status_callback"] = message.status_callback
        try:
            created = self.client.messages.create(**values)
        except TwilioRestException as exc:
            raise _refusal(exc) from None
        except (TwilioException, requests.RequestException) as exc:
            raise SmsError(f"Twilio not reachable: {type(exc).__name__}") from None
        return Accepted(PROVIDER, created.sid or "")


def _refusal(exc: TwilioRestException) -> SmsError:
    code, status = exc.code, exc.status
    if code in GIVE_UP_CODES:
        return SmsError(f"Twilio refused it: {code} {GIVE_UP_CODES[code]}", permanent=True)
    return SmsError(f"Twilio answered HTTP {status} (error {code})", permanent=refused_for_good(status))


def valid_signature(url: str, form: dict, signature: str) -> bool:
    """Whether ``signature`` (X-Twilio-Signature) signs the callback to ``url`` with ``form``."""
    token = settings.RECECO_TWILIO_AUTH_TOKEN
    return bool(token and signature) and RequestValidator(token).validate(url, form, signature)


def report(form) -> tuple[str, str, str] | None:
    """A status callback's (message id, Report, reason); None for a status not tracked
    (queued, sending, accepted …)."""
    status = STATUSES.get(form.get("MessageStatus", ""))
    message_id = form.get("MessageSid", "")
    if status is None or not message_id:
        return None
    reason = ""
    if status == Report.FAILED:
        code = form.get("ErrorCode", "")
        reason = f"{code} {DELIVERY_ERRORS.get(code, '')}".strip() if code else "no reason given"
    return message_id, status, reason
