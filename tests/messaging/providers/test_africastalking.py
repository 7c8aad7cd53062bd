"""Africa's Talking through its official SDK, against the local double of its API
(tests.provider_doubles): the request as documented, each recipient status given up or
tried again, and its delivery reports at the secret URL."""

import pytest

from messaging.models import SMS, Delivery, Report
from tests.messaging.providers.conftest import PHONE, only_delivery, wait_for_report
from tests.provider_doubles import AT_HOST, AT_USERNAME

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_receipt_goes_as_africas_talking_documents_and_its_reports_come_back(
    use, doubles, reports_to, receipt_factory
):
    use("africastalking")
    receipt_factory(customer_phone=PHONE)

    [request] = doubles.of(AT_HOST)
    assert request.path == "/version1/messaging"
    form = request.form
    assert (form["username"], form["to"], form["from"], form["bulkSMSMode"]) == (AT_USERNAME, PHONE, "Receco", "1")
    assert form["message"].startswith("Receipt from Mama Put Kitchen, NGN 1,300.00: ")
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.provider, delivery.parts) == (Delivery.Status.SENT, "africastalking", 1)
    assert delivery.provider_message_id.startswith("ATXid_")

    assert wait_for_report(delivery, Report.DELIVERED, doubles, 1).report_words == "Delivered"


@pytest.mark.parametrize(
    ("answer", "status", "error"),
    [
        ("bad_number", Delivery.Status.FAILED, "SmsError: Africa's Talking refused it: 403 InvalidPhoneNumber"),
        (
            "throttled",
            Delivery.Status.RETRYING,
            "SmsError: Africa's Talking could not send it now: 405 InsufficientBalance",
        ),
        ("server_error", Delivery.Status.RETRYING, "SmsError: Africa's Talking refused the request (not 2xx)"),
    ],
)
def test_africas_talkings_refusals_are_given_up_or_tried_again(use, doubles, receipt_factory, answer, status, error):
    use("africastalking")
    doubles.answer["africastalking"] = answer
    receipt_factory(customer_phone=PHONE)
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.last_error, delivery.attempts) == (status, error, 1)


def test_a_failed_report_fails_the_delivery_with_its_reason(use, doubles, reports_to, receipt_factory):
    use("africastalking")
    doubles.reports["africastalking"] = ["Sent", "Failed"]
    receipt_factory(customer_phone=PHONE)
    delivery = wait_for_report(only_delivery(SMS), Report.FAILED, doubles, 2)
    assert delivery.status == Delivery.Status.FAILED
    assert delivery.report_words == "Not delivered: UserInBlackList"
