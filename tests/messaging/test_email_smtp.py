"""Receipt emails through Django's real SMTP backend, against an SMTP server on localhost."""

import email
import email.policy

import pytest

from receipts.writer import update_contact as attach_contact
from tests.receivers import SMTPServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def smtp(settings):
    def start(**options):
        server = SMTPServer(**options)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
        servers.append(server)
        return server

    servers = []
    yield start
    for server in servers:
        server.close()


def test_a_well_formed_email_reaches_the_smtp_server(smtp, receipt, django_capture_on_commit_callbacks):
    server = smtp()
    with django_capture_on_commit_callbacks(execute=True):
        attach_contact(receipt, "customer@example.com", None)
    [sent] = server.messages
    assert sent["from"] == "<receipts@localhost>"
    assert sent["to"] == ["<customer@example.com>"]
    message = email.message_from_bytes(sent["data"], policy=email.policy.default)
    assert message["To"] == "customer@example.com"
    assert message["From"] == "Mama Put Kitchen <receipts@localhost>"
    # Python folds the encoded subject onto a continuation line; readers unfold and trim it.
    assert message["Subject"].strip() == "Your receipt from Mama Put Kitchen: ₦1,300.00"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["Message-ID"]
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    assert receipt.message_url in text
    assert f'href="{receipt.message_url}"' in html
    assert "₦1,300.00" in text
    assert receipt.deliveries.get().status == "sent"


def test_a_refused_recipient_fails_without_retrying(smtp, receipt, django_capture_on_commit_callbacks):
    smtp(refuse_recipients=True)
    with django_capture_on_commit_callbacks(execute=True):
        attach_contact(receipt, "customer@example.com", None)
    delivery = receipt.deliveries.get()
    assert delivery.status == "failed"
    assert delivery.last_error.startswith("SMTPRecipientsRefused: ")
    assert "customer@example.com" not in delivery.last_error


def test_a_missing_smtp_server_is_retried(smtp, receipt, settings, django_capture_on_commit_callbacks):
    server = smtp()
    server.close()  # nothing listens there any more
    with django_capture_on_commit_callbacks(execute=True):
        attach_contact(receipt, "customer@example.com", None)
    delivery = receipt.deliveries.get()
    assert (delivery.status, delivery.attempts) == ("retrying", 1)
    assert "ConnectionRefusedError" in delivery.last_error
