"""Text-message backends, chosen like Django's email backends.

RECECO_SMS_BACKEND is ``console`` (the default: logs each message with the number
masked), ``webhook`` (a JSON POST to an SMS provider or gateway, configured by
RECECO_SMS_WEBHOOK_URL and RECECO_SMS_WEBHOOK_TOKEN), a provider (``africastalking``,
``twilio``, ``termii``: messaging.providers) or the dotted path of a class with a
``send(message)`` method, which returns what the provider said of it (``Accepted``: its
id for the message, which its delivery reports name) or None. ``locmem`` keeps messages
in ``messaging.sms.outbox`` for tests; the dummy backend is the sink for test receipts.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings
from django.utils.module_loading import import_string

from receipts.contacts import mask_phone

logger = logging.getLogger(__name__)

BACKENDS = {
    "console": "messaging.sms.ConsoleBackend",
    "webhook": "messaging.sms.WebhookBackend",
    "locmem": "messaging.sms.LocmemBackend",
    "dummy": "messaging.sms.DummyBackend",
    "africastalking": "messaging.providers.africastalking.Backend",
    "twilio": "messaging.providers.twilio.Backend",
    "termii": "messaging.providers.termii.Backend",
}

# Messages the locmem backend "sent", like django.core.mail.outbox.
outbox: list[SmsMessage] = []


@dataclass(frozen=True)
class SmsMessage:
    to: str  # E.164
    body: str
    # Stable across retries of one delivery, so a provider that honours it sends once.
    idempotency_key: str = ""
    # The sender id it goes from (the merchant's, else RECECO_SMS_SENDER): where the provider allows one.
    sender: str = ""
    # Where the provider is to send its delivery reports, for those told per message (Twilio).
    status_callback: str = ""


@dataclass(frozen=True)
class Accepted:
    """A provider took the message: its name and the id it gave the message."""

    provider: str
    message_id: str


class SmsError(Exception):
    """Sending failed. ``permanent`` is True when trying again cannot help (the provider
    refused the number or the request), False for outages and timeouts."""

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


def get_backend(path: str | None = None):
    """Return an instance of the configured backend (or of ``path``: a short name or a dotted path)."""
    path = path or settings.RECECO_SMS_BACKEND
    return import_string(BACKENDS.get(path, path))()


class ConsoleBackend:
    """Development: the message goes to the log, the number masked. Its text (the receipt's
    link, whose token opens the receipt) only in debug mode: without it, this is the
    default backend of a deployment that has not chosen one, and logs are kept and shared."""

    def send(self, message: SmsMessage) -> None:
        if settings.DEBUG:
            logger.info("SMS to %s: %s", mask_phone(message.to), message.body)
        else:
            logger.info("SMS to %s (console backend: its text is logged in debug mode only)",
                        mask_phone(message.to))  # fmt: skip


class DummyBackend:
    """Discards every message: the sink for test receipts."""

    def send(self, message: SmsMessage) -> None:
        logger.info("SMS to %s discarded (sink)", mask_phone(message.to))


class LocmemBackend:
    """Tests: keeps every message in ``messaging.sms.outbox``."""

    def send(self, message: SmsMessage) -> None:
        outbox.append(message)


class WebhookBackend:
    """POSTs ``{"to", "from", "message"}`` as JSON to RECECO_SMS_WEBHOOK_URL.

    Sends ``Authorization: Bearer <RECECO_SMS_WEBHOOK_TOKEN>`` when a token is set and an
    ``Idempotency-Key`` that stays the same when a delivery is retried. Any 2xx answer
    is success; 4xx other than 408 and 429 is a permanent failure, everything else
    (5xx, timeouts, refused connections) is worth retrying.
    """

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float | None = None):
        self.url = url or settings.RECECO_SMS_WEBHOOK_URL
        self.token = settings.RECECO_SMS_WEBHOOK_TOKEN if token is None else token
        self.timeout = timeout or settings.RECECO_SMS_TIMEOUT

    def send(self, message: SmsMessage) -> None:
        body = json.dumps(
            {"to": message.to, "from": message.sender or settings.RECECO_SMS_SENDER, "message": message.body}
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "Receco"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if message.idempotency_key:
            headers["Idempotency-Key"] = message.idempotency_key
        request = urllib.request.Request(self.url, data=body.encode(), headers=headers, method="POST")  # noqa: S310 (the URL is http(s), checked by settings)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                response.read(1024)
        except urllib.error.HTTPError as exc:
            # The provider's answer may quote the number: only the status is kept.
            permanent = 400 <= exc.code < 500 and exc.code not in (408, 429)
            raise SmsError(f"SMS provider answered HTTP {exc.code}", permanent=permanent) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SmsError(f"SMS provider not reachable: {reason}") from None
