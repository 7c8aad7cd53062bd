"""WhatsApp: receipts as template messages through the Cloud API's double
(tests.provider_doubles), only to customers who chose it, their opt-in kept; its errors
given up or tried again; its signed status webhooks."""

import pytest

from messaging.models import SMS, WHATSAPP, Delivery, OptIn, Report
from tests.messaging.providers.conftest import PHONE, only_delivery, wait_for_report
from tests.provider_doubles import GRAPH_HOST, WHATSAPP_PHONE_ID

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_receipt_goes_as_the_utility_template_and_its_statuses_come_back(use, doubles, reports_to, receipt_factory):
    use("whatsapp")
    receipt_factory(customer_phone=PHONE, customer_phone_channel="whatsapp")

    [request] = doubles.of(GRAPH_HOST)
    assert request.path == f"/v23.0/{WHATSAPP_PHONE_ID}/messages"
    assert request.headers["Authorization"].startswith("Bearer ")
    body = request.json
    assert (body["messaging_product"], body["to"], body["type"]) == ("whatsapp", PHONE.lstrip("+"), "template")
    template = body["template"]
    assert (template["name"], template["language"]) == ("receco_receipt", {"code": "en"})
    texts = [parameter["text"] for parameter in template["components"][0]["parameters"]]
    assert texts[:3] == ["Mama Put Kitchen", "₦1,300.00", f"{reports_to.url}/r/K7P2QX"]
    assert texts[3].startswith(f"{reports_to.url}/n/K7P2QX?k=")
    delivery = only_delivery(WHATSAPP)
    assert (delivery.status, delivery.provider, delivery.parts) == (Delivery.Status.SENT, "whatsapp", 1)
    assert delivery.opt_in == OptIn.TILL  # asked for at the till, with the shop's key
    assert not Delivery.objects.filter(channel=SMS).exists()

    assert wait_for_report(delivery, Report.READ, doubles, 3).report_words == "Read"


@pytest.mark.parametrize(
    ("answer", "status", "error"),
    [
        ("bad_number", Delivery.Status.FAILED, "WhatsApp answered HTTP 400 (error 131030)"),
        ("throttled", Delivery.Status.RETRYING, "WhatsApp answered HTTP 400 (error 130429)"),
        ("server_error", Delivery.Status.RETRYING, "WhatsApp answered HTTP 500 (error 1)"),
    ],
)
def test_whatsapps_refusals_are_given_up_or_tried_again(use, doubles, receipt_factory, answer, status, error):
    use("whatsapp")
    doubles.answer["whatsapp"] = answer
    receipt_factory(customer_phone=PHONE, customer_phone_channel="whatsapp")
    delivery = only_delivery(WHATSAPP)
    assert (delivery.status, delivery.last_error, delivery.attempts) == (status, error, 1)


def test_a_failed_status_fails_the_delivery_with_whatsapps_reason(use, doubles, reports_to, receipt_factory):
    use("whatsapp")
    doubles.reports["whatsapp"] = ["failed"]
    receipt_factory(customer_phone=PHONE, customer_phone_channel="whatsapp")
    delivery = wait_for_report(only_delivery(WHATSAPP), Report.FAILED, doubles, 1)
    assert (delivery.status, delivery.report_words) == (
        Delivery.Status.FAILED,
        "Not delivered: 131026 Message undeliverable",
    )


def test_a_test_receipt_goes_to_the_sink_not_to_whatsapp(use, doubles, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    use("whatsapp")
    chosen = {**sale, "customer_phone": PHONE, "customer_phone_channel": "whatsapp"}
    create_receipt(merchant, validate_sale(chosen), livemode=False, keyed=True)  # a test key's
    assert not doubles.of(GRAPH_HOST)
    assert only_delivery(WHATSAPP).status == Delivery.Status.SINK
