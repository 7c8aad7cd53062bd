"""Email through a provider's HTTP API (django-anymail, Mailgun's double in
tests.provider_doubles): the message id kept, its errors given up or tried again, and
its signed tracking webhooks."""

import pytest

from messaging.models import EMAIL as EMAIL_CHANNEL
from messaging.models import Delivery, Report
from tests.messaging.providers.conftest import EMAIL, only_delivery, wait_for_report
from tests.provider_doubles import MAILGUN_DOMAIN, MAILGUN_HOST

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_receipt_goes_through_mailgun_and_its_tracking_webhook_comes_back(use, doubles, reports_to, receipt_factory):
    use("mailgun")
    receipt_factory(customer_email=EMAIL)

    [request] = doubles.of(MAILGUN_HOST)
    assert request.path == f"/v3/{MAILGUN_DOMAIN}/messages"
    assert request.form["to"] == EMAIL
    assert request.form["subject"] == "Your receipt from Mama Put Kitchen: ₦1,300.00"
    delivery = only_delivery(EMAIL_CHANNEL)
    assert (delivery.status, delivery.provider, delivery.parts) == (Delivery.Status.SENT, "mailgun", 0)
    assert delivery.provider_message_id.endswith(f"@{MAILGUN_DOMAIN}>")

    assert wait_for_report(delivery, Report.DELIVERED, doubles, 1).report_words == "Delivered"


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("bad_number", Delivery.Status.FAILED),
        ("throttled", Delivery.Status.RETRYING),
        ("server_error", Delivery.Status.RETRYING),
    ],
)
def test_the_providers_refusals_are_given_up_or_tried_again(use, doubles, receipt_factory, answer, status):
    use("mailgun")
    doubles.answer["mailgun"] = answer
    receipt_factory(customer_email=EMAIL)
    delivery = only_delivery(EMAIL_CHANNEL)
    assert (delivery.status, delivery.attempts) == (status, 1)
    assert delivery.last_error.startswith("AnymailRequestsAPIError: Mailgun API response ")
    assert "customer@" not in delivery.last_error


def test_a_bounce_fails_the_delivery(use, doubles, reports_to, receipt_factory):
    use("mailgun")
    doubles.reports["mailgun"] = ["failed"]
    receipt_factory(customer_email=EMAIL)
    delivery = wait_for_report(only_delivery(EMAIL_CHANNEL), Report.FAILED, doubles, 1)
    assert delivery.status == Delivery.Status.FAILED
    assert delivery.report_words.startswith("Not delivered: ")
