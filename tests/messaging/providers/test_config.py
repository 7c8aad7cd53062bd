"""The providers' settings checked at start-up (messaging.providers.config): a chosen
provider without its credentials stops every process, naming the variable."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from messaging.apps import check_providers
from messaging.providers.config import problems
from messaging.providers.email import anymail_settings


def _ids(found):
    return [(problem.id, problem.msg) for problem in found]


def test_a_provider_without_its_credentials_is_an_error(settings):
    settings.RECECO_SMS_BACKEND = "twilio"
    settings.RECECO_TWILIO_ACCOUNT_SID, settings.RECECO_TWILIO_AUTH_TOKEN = "AC" + "1" * 32, ""
    assert _ids(problems()) == [("messaging.E001", "RECECO_SMS_BACKEND=twilio needs RECECO_TWILIO_AUTH_TOKEN")]
    with pytest.raises(ImproperlyConfigured, match="^RECECO_SMS_BACKEND=twilio needs RECECO_TWILIO_AUTH_TOKEN$"):
        check_providers(problems())


def test_reports_that_cannot_be_checked_are_a_warning_not_an_error(settings):
    settings.RECECO_SMS_BACKEND = "termii"
    settings.RECECO_TERMII_API_KEY, settings.RECECO_TERMII_SECRET_KEY = "TL-key", ""
    assert _ids(problems()) == [
        ("messaging.W001", "RECECO_TERMII_SECRET_KEY is not set: termii's delivery reports are refused")
    ]
    check_providers(problems())  # starts


def test_whatsapp_needs_both_its_id_and_token_and_a_language_code(settings):
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID = "1065"
    assert _ids(problems()) == [("messaging.E005", "WhatsApp needs RECECO_WHATSAPP_ACCESS_TOKEN too")]
    settings.RECECO_WHATSAPP_ACCESS_TOKEN, settings.RECECO_WHATSAPP_APP_SECRET = "EAAG", "secret"
    settings.RECECO_WHATSAPP_TEMPLATE_LANGUAGE = "English"
    assert [problem.id for problem in problems()] == ["messaging.E007"]


def test_a_sender_id_too_long_for_a_provider_is_an_error(settings):
    settings.RECECO_SMS_BACKEND = "termii"
    settings.RECECO_TERMII_API_KEY, settings.RECECO_TERMII_SECRET_KEY = "TL-key", "secret"
    settings.RECECO_SMS_SENDER = "Mama Put Kitchen"
    assert [problem.id for problem in problems()] == ["messaging.E004"]


def test_an_email_provider_names_what_it_misses():
    with pytest.raises(
        ImproperlyConfigured, match="^RECECO_EMAIL_PROVIDER=postmark needs RECECO_EMAIL_PROVIDER_API_KEY$"
    ):
        anymail_settings("postmark", api_key="")
    with pytest.raises(ImproperlyConfigured, match="must be one of mailgun, postmark, brevo, sendgrid"):
        anymail_settings("amazon_ses", api_key="x")
    assert anymail_settings("postmark", api_key="token") == (
        "anymail.backends.postmark.EmailBackend",
        {"POSTMARK_SERVER_TOKEN": "token"},
    )
