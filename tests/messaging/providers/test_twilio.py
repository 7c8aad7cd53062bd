"""Twilio through its official SDK, against the local double of its API
(tests.provider_doubles): the request as Twilio documents it, its errors given up or
tried again, and its signed status callbacks."""

import pytest

from messaging.models import SMS, Delivery, Report
from tests.messaging.providers.conftest import PHONE, only_delivery, wait_for_report
from tests.provider_doubles import TWILIO_HOST, TWILIO_SID

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_receipt_goes_as_twilio_documents_and_its_status_callbacks_come_back(
    use, doubles, reports_to, receipt_factory
):
    use("twilio")
    receipt_factory(customer_phone=PHONE)

    [request] = doubles.of(TWILIO_HOST)
    assert request.path == f"/2010-04-01/Accounts/{TWILIO_SID}/Messages.json"
    form = request.form
    assert form["To"] == PHONE
    assert form["From"] == "Receco"
    assert form["Body"].startswith(
        f"Receipt from Mama Put Kitchen, NGN 1,300.00: {reports_to.url}/r/K7P2QX\nNot yours? "
    )
    assert form["StatusCallback"] == f"{reports_to.url}/callbacks/twilio/"
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.provider, delivery.parts) == (Delivery.Status.SENT, "twilio", 1)
    assert delivery.provider_message_id.startswith("SM")

    delivery = wait_for_report(delivery, Report.DELIVERED, doubles, 2)
    assert delivery.report_words == "Delivered"


def test_a_merchants_sender_id_is_the_from(use, doubles, merchant, receipt_factory):
    from messaging.models import ChannelSettings

    use("twilio")
    ChannelSettings.objects.create(merchant=merchant, sms_sender_id="MamaPut")
    receipt_factory(customer_phone=PHONE)
    assert doubles.of(TWILIO_HOST)[0].form["From"] == "MamaPut"


@pytest.mark.parametrize(
    ("answer", "status", "error"),
    [
        ("bad_number", Delivery.Status.FAILED, "SmsError: Twilio refused it: 21211 invalid 'To' number"),
        ("throttled", Delivery.Status.RETRYING, "SmsError: Twilio answered HTTP 429 (error 20429)"),
        ("server_error", Delivery.Status.RETRYING, "SmsError: Twilio answered HTTP 503 (error 20500)"),
    ],
)
def test_twilios_refusals_are_given_up_or_tried_again(use, doubles, receipt_factory, answer, status, error):
    use("twilio")
    doubles.answer["twilio"] = answer
    receipt_factory(customer_phone=PHONE)
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.last_error, delivery.attempts) == (status, error, 1)
    assert "8031234567" not in delivery.last_error  # Twilio's message quotes the number
    assert (delivery.next_attempt_at is not None) == (status == Delivery.Status.RETRYING)


def test_an_undelivered_status_fails_the_delivery_with_twilios_reason(use, doubles, reports_to, receipt_factory):
    use("twilio")
    doubles.reports["twilio"] = ["sent", "undelivered"]
    receipt_factory(customer_phone=PHONE)
    delivery = wait_for_report(only_delivery(SMS), Report.FAILED, doubles, 2)
    assert delivery.status == Delivery.Status.FAILED
    assert delivery.report_words == "Not delivered: 30003 Unreachable destination handset"
