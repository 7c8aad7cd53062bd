"""The console email backend (issue 32, item 4): outside debug mode a message goes to the
log as one line, its recipients masked and its text left out; the shipped .env.example
chose it, and every email (receipts, locker links, invitations, password resets) was
printed whole, "To:" and links included. In debug mode it prints the whole message, for
development."""

import pytest
from django.core import mail

from messaging.console_email import EmailBackend
from tests.servers import manage

TO = "ada.lovelace@example.com"


CONSOLE = {"EMAIL_URL": "console:"}


def _sendtestemail(tmp_path, **env: str) -> str:
    """What Django's ``sendtestemail`` writes under the servers' settings with ``env``."""
    done = manage(f"sqlite:///{tmp_path / 'db.sqlite3'}", "sendtestemail", TO, **env)
    return done.stdout + done.stderr


# Django's console backend named outside EMAIL_URL is Receco's too.
@pytest.mark.parametrize("env", [CONSOLE, {"EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend"}])
def test_outside_debug_the_log_has_the_recipient_masked_and_no_text(tmp_path, env):
    output = _sendtestemail(tmp_path, RECECO_LOG_FORMAT="json", **env)
    assert TO not in output
    assert "ada.lovelace" not in output
    assert "If you're reading this, it was successful." not in output  # the message's text
    assert "Email to a*******@example.com (console backend: its text is logged in debug mode only)" in output


def test_in_debug_mode_the_whole_message_is_printed(tmp_path):
    output = _sendtestemail(tmp_path, DJANGO_DEBUG="1", **CONSOLE)
    assert f"To: {TO}" in output
    assert "If you're reading this, it was successful." in output


def test_every_recipient_is_masked_and_each_message_counted(settings, caplog):
    settings.DEBUG = False
    messages = [
        mail.EmailMessage(
            "Receipt", "https://receco.ng/r/K7P2QX", to=["Ada <ada@example.com>"], cc=["grace@example.org"]
        ),
        mail.EmailMessage("Receipt", "https://receco.ng/r/K7P2QY", bcc=["olu@example.net"]),
    ]
    with caplog.at_level("INFO", logger="messaging.console_email"):
        assert EmailBackend().send_messages(messages) == 2
    assert caplog.messages == [
        "Email to a*******@example.com, g*******@example.org (console backend: its text is logged in debug mode only)",
        "Email to o*******@example.net (console backend: its text is logged in debug mode only)",
    ]
