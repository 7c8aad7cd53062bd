"""The providers' doubles (tests.provider_doubles) for the tests of each provider: every
client of this process pointed at them, and the service's settings at their accounts."""

import pytest

from messaging.models import Delivery
from messaging.providers.email import anymail_settings
from tests.provider_doubles import Providers, settings_for

PHONE = "+2348031234567"
EMAIL = "customer@example.com"


@pytest.fixture
def doubles(tmp_path, monkeypatch):
    running = Providers(tmp_path)
    for name, value in running.environment().items():
        monkeypatch.setenv(name, value)
    yield running
    running.close()


@pytest.fixture
def use(settings, doubles):
    """Configure the service for a provider's double account: ``use("twilio")``."""

    def configure(provider: str) -> None:
        values = settings_for(provider)
        for name, value in values.items():
            setattr(settings, name, value)
        if provider == "mailgun":
            settings.EMAIL_BACKEND, anymail = anymail_settings(
                "mailgun",
                api_key=values["RECECO_EMAIL_PROVIDER_API_KEY"],
                domain=values["RECECO_EMAIL_PROVIDER_DOMAIN"],
                signing_key=values["RECECO_EMAIL_WEBHOOK_SIGNING_KEY"],
            )
            settings.ANYMAIL = {"WEBHOOK_SECRET": values["RECECO_EMAIL_WEBHOOK_SECRET"], **anymail}

    return configure


@pytest.fixture
def reports_to(live_server, settings, doubles):
    """Have the doubles report to this test's live server, as each is registered there."""
    settings.RECECO_WEB_URL = live_server.url
    doubles.report_to.update(
        africastalking=f"{live_server.url}/callbacks/africastalking/{settings_for('africastalking')['RECECO_AFRICASTALKING_CALLBACK_SECRET']}/",
        termii=f"{live_server.url}/callbacks/termii/",
        whatsapp=f"{live_server.url}/callbacks/whatsapp/",
        mailgun=f"{live_server.url}/callbacks/email/mailgun/tracking/",
    )
    return live_server


def only_delivery(channel: str) -> Delivery:
    return Delivery.objects.get(channel=channel)


def wait_for_report(delivery: Delivery, report: str, doubles, count: int) -> Delivery:
    """The delivery once the doubles sent ``count`` reports back (and they were recorded)."""
    sent = doubles.wait_for_reports(count)
    assert [answer.status for answer in sent] == [200] * count, sent
    delivery.refresh_from_db()
    assert delivery.report == report
    return delivery
