"""The console email backend (EMAIL_URL=console:, and the default in debug mode).

In debug mode it is Django's: each whole message printed, links and all, for
development. Outside it, each message is one log line, its recipients masked, as the
console SMS backend does (messaging.sms): a deployment's logs are kept and shared, and a
message's text holds what opens a receipt, the locker, a new dashboard account or a
password reset, and its "To:" a customer's address, which erasure cannot reach there.
"""

import logging
from email.utils import parseaddr

from django.conf import settings
from django.core.mail.backends import console

from receipts.contacts import mask_email

logger = logging.getLogger(__name__)


class EmailBackend(console.EmailBackend):
    def send_messages(self, email_messages) -> int:
        """Print or log each of ``email_messages``; return how many there were."""
        if settings.DEBUG:
            return super().send_messages(email_messages)
        for message in email_messages:
            recipients = ", ".join(mask_email(parseaddr(recipient)[1]) for recipient in message.recipients())
            logger.info("Email to %s (console backend: its text is logged in debug mode only)", recipients)
        return len(email_messages)
