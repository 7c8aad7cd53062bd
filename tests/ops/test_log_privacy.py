"""No personal data and no keys in any log line: the API driven as a till and a customer
would (a sale with the customer's email and phone, a bad key, a send from the receipt
page, deliveries that fail), every logger at DEBUG, every line formatted as production
writes it."""

import logging

import pytest

from receco.ops.logformat import JsonFormatter
from receco.ops.requestid import RequestIdFilter
from tests.helpers import bearer
from tests.servers import free_port

# Committed for real, so that deliveries are queued (and run) inside the request that asked.
pytestmark = pytest.mark.django_db(transaction=True)

EMAIL = "ada.lovelace@example.com"
PHONE = "+2348031234567"
OTHER_EMAIL = "grace.hopper@example.org"
OTHER_PHONE = "+2348059876543"


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(self.format(record))


@pytest.fixture
def every_line():
    """Every record of every logger at DEBUG, as the JSON format writes it."""
    handler = Lines()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    loggers = [logging.getLogger(), *[logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]]
    levels = [(logger, logger.level, logger.disabled) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.disabled = False
    logging.getLogger().addHandler(handler)
    yield handler.lines
    logging.getLogger().removeHandler(handler)
    for logger, level, disabled in levels:
        logger.setLevel(level)
        logger.disabled = disabled


@pytest.fixture
def failing_channels(settings):
    """Email to an SMTP server that is not there; SMS through the console backend."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()
    settings.EMAIL_TIMEOUT = 1
    settings.RECECO_SMS_BACKEND = "console"


def _secrets(*texts: str) -> set[str]:
    """Each text and the parts of it that would still give it away."""
    found = set()
    for text in texts:
        found.add(text)
        if "@" in text:
            found.add(text.partition("@")[0])
        if text.startswith("+234"):
            found.update({text[1:], "0" + text[4:], text[4:]})
    return found


def test_no_line_holds_a_contact_a_key_or_a_token(api, client, sale, live_key, failing_channels, every_line):
    bad_key = live_key.key[:-6] + "AAAAAA"
    status, body = api.post(
        "createReceiptFromPOS",
        {**sale, "customer_email": EMAIL, "customer_phone": PHONE},
        **bearer(live_key),
        **{"X-Request-ID": "till-7-sale-42"},
    )
    assert status == 200, body
    assert api.post("createReceiptFromPOS", sale, Authorization=f"Bearer {bad_key}")[0] == 401
    token = body["result"]["data"]["token"]
    response = client.post(f"/app/receipt/{token}/send", {"email": OTHER_EMAIL, "phone": OTHER_PHONE})
    assert response.status_code == 302

    text = "\n".join(every_line)
    assert "failed" in text  # the deliveries failed, and said so
    assert "till-7-sale-42" in text  # the lines carry the request id
    short_code = body["result"]["data"]["short_code"]
    secrets = _secrets(EMAIL, PHONE, OTHER_EMAIL, OTHER_PHONE, live_key.key, bad_key, token, short_code)
    assert [secret for secret in secrets if secret in text] == []
