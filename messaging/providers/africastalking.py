"""Text messages through Africa's Talking, with its official SDK (``africastalking``).

The SDK posts to https://api.africastalking.com/version1/messaging (the sandbox's
api.sandbox.africastalking.com for the username "sandbox") with the ``apiKey`` header,
and answers each recipient with a ``statusCode`` (its documentation's table, mapped in
``_GIVE_UP`` and ``_RETRY``) and a ``messageId`` that its delivery reports name. Those
reports come to /callbacks/africastalking/<RECECO_AFRICASTALKING_CALLBACK_SECRET>/ as a
form: Africa's Talking signs none, so the secret path is what proves them (``report``).
"""

from __future__ import annotations

import requests
from africastalking import SMSService
from africastalking.Service import AfricasTalkingException
from django.conf import settings

from messaging.models import Report
from messaging.sms import Accepted, SmsError, SmsMessage

PROVIDER = "africastalking"
CONNECT_TIMEOUT = 3.05
# Recipient status codes: taken (100 Processed, 101 Sent, 102 Queued); refused for good
# (a bad or blocked number, a sender id or route the account may not use); refused for now.
_TAKEN = {100, 101, 102}
_GIVE_UP = {
    401: "RiskHold",
    402: "InvalidSenderId",
    403: "InvalidPhoneNumber",
    404: "UnsupportedNumberType",
    406: "UserInBlacklist",
    407: "CouldNotRoute",
    409: "DoNotDisturbRejection",
}
_RETRY = {405: "InsufficientBalance", 500: "InternalServerError", 501: "GatewayError", 502: "RejectedByGateway"}
# Delivery report statuses: Sent, Submitted and Buffered are on their way; the rest final.
STATUSES = {
    "Sent": Report.SENT,
    "Submitted": Report.SENT,
    "Buffered": Report.SENT,
    "Success": Report.DELIVERED,
    "Rejected": Report.FAILED,
    "Failed": Report.FAILED,
}


class Backend:
    """RECECO_SMS_BACKEND=africastalking (RECECO_AFRICASTALKING_USERNAME and _API_KEY)."""

    def __init__(self):
        self.service = SMSService(settings.RECECO_AFRICASTALKING_USERNAME, settings.RECECO_AFRICASTALKING_API_KEY)

    def send(self, message: SmsMessage) -> Accepted:
        try:
            answer = self.service.send(
                message.body,
                [message.to],
                sender_id=message.sender or None,
                timeout=(CONNECT_TIMEOUT, settings.RECECO_SMS_TIMEOUT),
            )
        except ValueError as exc:  # the SDK's own check of the number
            raise SmsError(f"Africa's Talking refused the number: {exc}", permanent=True) from None
        except AfricasTalkingException:
            # A non-2xx answer, whose status the SDK does not keep: its text may quote the
            # request, so only that it refused is kept; an outage or a key being fixed.
            raise SmsError("Africa's Talking refused the request (not 2xx)") from None
        except requests.RequestException as exc:
            raise SmsError(f"Africa's Talking not reachable: {type(exc).__name__}") from None
        return Accepted(PROVIDER, _message_id(answer))


def _message_id(answer: object) -> str:
    """The message id of the one recipient of ``answer``; raises SmsError for its refusal."""
    try:
        recipient = answer["SMSMessageData"]["Recipients"][0]
        code = int(recipient["statusCode"])
    except (TypeError, KeyError, IndexError, ValueError):
        raise SmsError("Africa's Talking answered without a recipient's status") from None
    if code in _TAKEN:
        return str(recipient.get("messageId") or "")
    if code in _GIVE_UP:
        raise SmsError(f"Africa's Talking refused it: {code} {_GIVE_UP[code]}", permanent=True)
    raise SmsError(f"Africa's Talking could not send it now: {code} {_RETRY.get(code, recipient.get('status', ''))}")


def report(form) -> tuple[str, str, str] | None:
    """A delivery report's (message id, Report, reason) from its form; None for a status
    this service does not track."""
    status = STATUSES.get(form.get("status", ""))
    message_id = form.get("id", "")
    if status is None or not message_id:
        return None
    return message_id, status, form.get("failureReason", "") if status == Report.FAILED else ""
