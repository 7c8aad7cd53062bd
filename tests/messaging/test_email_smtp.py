"""Receipt emails through Django's real SMTP backend, against an SMTP server on localhost."""

import email
import email.policy
import socketserver
import threading

import pytest

from receipts.writer import update_contact as attach_contact

pytestmark = pytest.mark.django_db


class SMTPServer:
    """Just enough SMTP (RFC 5321) to receive a message, or to refuse its recipient."""

    def __init__(self, refuse_recipients: bool = False):
        self.messages = []
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str):
                self.wfile.write(f"{line}\r\n".encode())

            def handle(self):
                self.reply("220 localhost ESMTP test")
                envelope = {"to": []}
                while line := self.rfile.readline().decode().rstrip("\r\n"):
                    verb = line.split(" ", 1)[0].upper()
                    if verb in ("EHLO", "HELO"):
                        self.reply("250 localhost")
                    elif verb == "MAIL":
                        envelope["from"] = line.split(":", 1)[1].strip()
                        self.reply("250 OK")
                    elif verb == "RCPT":
                        if refuse_recipients:
                            self.reply(f"550 5.1.1 {line.split(':', 1)[1].strip()} no such user")
                        else:
                            envelope["to"].append(line.split(":", 1)[1].strip())
                            self.reply("250 OK")
                    elif verb == "DATA":
                        self.reply("354 End data with <CR><LF>.<CR><LF>")
                        data = []
                        while (chunk := self.rfile.readline()) != b".\r\n":
                            data.append(chunk[1:] if chunk.startswith(b"..") else chunk)
                        server.messages.append({**envelope, "data": b"".join(data)})
                        self.reply("250 OK queued")
                    elif verb == "QUIT":
                        self.reply("221 Bye")
                        return
                    else:
                        self.reply("250 OK")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


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
    assert receipt.public_url in text
    assert f'href="{receipt.public_url}"' in html
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
