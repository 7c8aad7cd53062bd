"""Email and delivery settings read from the environment (issue 4)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from receco.lib.env import parse_email_url

ROOT = Path(__file__).resolve().parents[2]


def test_smtp_with_starttls():
    assert parse_email_url("EMAIL_URL", "smtp+tls://apikey:p%40ss%2Fw@smtp.example.com") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "apikey",
        "EMAIL_HOST_PASSWORD": "p@ss/w",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
    }


def test_smtps_and_plain_smtp_ports():
    assert parse_email_url("EMAIL_URL", "smtps://u:p@mail.example.com")["EMAIL_PORT"] == 465
    assert parse_email_url("EMAIL_URL", "smtps://u:p@mail.example.com")["EMAIL_USE_SSL"] is True
    assert parse_email_url("EMAIL_URL", "smtp://localhost:2525")["EMAIL_PORT"] == 2525


def test_console_and_dummy():
    # Receco's console backend: whole messages in debug mode only (messaging.console_email).
    assert parse_email_url("EMAIL_URL", "console:") == {"EMAIL_BACKEND": "messaging.console_email.EmailBackend"}
    assert parse_email_url("EMAIL_URL", "dummy://")["EMAIL_BACKEND"].endswith("dummy.EmailBackend")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://smtp.example.com", "EMAIL_URL must start with smtp://"),
        ("smtp://", "EMAIL_URL must name the SMTP host"),
        ("smtp://host:port", "EMAIL_URL has a port that is not a number"),
    ],
)
def test_bad_urls_fail_naming_the_variable(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_email_url("EMAIL_URL", url)


def _settings_error(**env) -> str:
    """Load the settings in a fresh interpreter with only ``env`` set; return what it printed."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_", "EMAIL_"))}
    result = subprocess.run(
        [sys.executable, "-c", "import receco.settings"],
        cwd=ROOT,
        env={**clean, "DJANGO_SECRET_KEY": "tests-only", "RECECO_LOCAL_CACHE": "1", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RECECO_TASKS_BACKEND": "celery"}, "RECECO_TASKS_BACKEND must be immediate or database"),
        ({"RECECO_SMS_BACKEND": "webhook"}, "RECECO_SMS_BACKEND=webhook needs RECECO_SMS_WEBHOOK_URL"),
        ({"RECECO_SMS_WEBHOOK_URL": "ftp://x"}, "RECECO_SMS_WEBHOOK_URL must be an absolute URL"),
        ({"DJANGO_TIME_ZONE": "Mars/Olympus"}, "DJANGO_TIME_ZONE must be a time zone name"),
        ({"EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on"),
        ({"EMAIL_URL": "mailto:x"}, "EMAIL_URL must start with"),
        (
            {"RECECO_CONTACT_FORM_RATE": "lots"},
            "RECECO_CONTACT_FORM_RATE must be rates such as 1000/m,100/s or 30/5m, not",
        ),
    ],
)
def test_bad_settings_stop_the_start(env, message):
    assert message in _settings_error(**env)


def test_good_settings_start():
    env = {"RECECO_TASKS_BACKEND": "database", "EMAIL_URL": "smtp+tls://u:p@smtp.example.com"}
    assert _settings_error(**env) == ""
