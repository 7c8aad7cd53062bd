"""Termii by its documented REST API, against the local double of it
(tests.provider_doubles): the JSON it takes, its errors given up or tried again, and its
signed delivery reports."""

import pytest

from messaging.models import SMS, Delivery, Report
from tests.messaging.providers.conftest import PHONE, only_delivery, wait_for_report
from tests.provider_doubles import TERMII_API_KEY, TERMII_HOST

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_receipt_goes_as_termii_documents_and_its_reports_come_back(use, doubles, reports_to, receipt_factory):
    use("termii")
    receipt_factory(customer_phone=PHONE)

    [request] = doubles.of(TERMII_HOST)
    assert request.path == "/api/sms/send"
    assert request.headers["Content-Type"] == "application/json"
    body = request.json
    assert {key: body[key] for key in ("api_key", "to", "from", "type", "channel")} == {
        "api_key": TERMII_API_KEY,
        "to": PHONE.lstrip("+"),
        "from": "Receco",
        "type": "plain",
        "channel": "dnd",
    }
    assert body["sms"].startswith("Receipt from Mama Put Kitchen, NGN 1,300.00: ")
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.provider, delivery.parts) == (Delivery.Status.SENT, "termii", 1)

    assert wait_for_report(delivery, Report.DELIVERED, doubles, 2).report_words == "Delivered"


@pytest.mark.parametrize(
    ("answer", "status", "error"),
    [
        ("bad_number", Delivery.Status.FAILED, "SmsError: Termii answered HTTP 400"),
        ("throttled", Delivery.Status.RETRYING, "SmsError: Termii answered HTTP 429"),
        ("server_error", Delivery.Status.RETRYING, "SmsError: Termii answered HTTP 500"),
    ],
)
def test_termiis_refusals_are_given_up_or_tried_again(use, doubles, receipt_factory, answer, status, error):
    use("termii")
    doubles.answer["termii"] = answer
    receipt_factory(customer_phone=PHONE)
    delivery = only_delivery(SMS)
    assert (delivery.status, delivery.last_error, delivery.attempts) == (status, error, 1)


def test_dnd_active_fails_the_delivery_with_termiis_words(use, doubles, reports_to, receipt_factory):
    use("termii")
    doubles.reports["termii"] = ["DND Active on Phone Number"]
    receipt_factory(customer_phone=PHONE)
    delivery = wait_for_report(only_delivery(SMS), Report.FAILED, doubles, 1)
    assert (delivery.status, delivery.report_words) == (
        Delivery.Status.FAILED,
        "Not delivered: DND Active on Phone Number",
    )
