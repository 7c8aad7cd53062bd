"""The providers' callback URLs: each signature or secret checked as its provider
documents it, a bad one refused with nothing changed; reports of unknown messages
acknowledged; the URLs rate-limited and size-bounded; a failure reported after we sent
fails the delivery and tells the merchant (delivery.failed)."""

import json
import urllib.parse

import pytest

from messaging.models import WHATSAPP, Delivery, Report
from tests.provider_doubles import (
    AT_CALLBACK_SECRET,
    WHATSAPP_VERIFY_TOKEN,
    termii_signature,
    twilio_signature,
    whatsapp_signature,
)

FORM = "application/x-www-form-urlencoded"
TWILIO_URL = "https://receipts.example.test/callbacks/twilio/"


def _twilio(client, values: dict, signature: str | None = None):
    signature = twilio_signature(TWILIO_URL, values) if signature is None else signature
    return client.post(
        "/callbacks/twilio/", urllib.parse.urlencode(values), content_type=FORM, HTTP_X_TWILIO_SIGNATURE=signature
    )


def _whatsapp_body(message_id: str, status: str) -> bytes:
    value = {"statuses": [{"id": message_id, "status": status, "timestamp": "1764850000", "recipient_id": "234"}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [{"changes": [{"value": value}]}]}).encode()


def test_a_signed_twilio_status_moves_the_report_on(client, configured, sent_delivery):
    delivery = sent_delivery("twilio", "SM1")
    response = _twilio(client, {"MessageSid": "SM1", "MessageStatus": "delivered", "To": "+2348031234567"})
    assert (response.status_code, response.content) == (200, b"OK\n")
    delivery.refresh_from_db()
    assert (delivery.report, delivery.report_words) == (Report.DELIVERED, "Delivered")


@pytest.mark.parametrize("signature", ["", "bm90IGl0", twilio_signature(TWILIO_URL, {"MessageSid": "SM1"})])
def test_a_twilio_status_without_its_signature_is_refused_and_changes_nothing(
    client, configured, sent_delivery, signature
):
    delivery = sent_delivery("twilio", "SM1")
    values = {"MessageSid": "SM1", "MessageStatus": "failed", "ErrorCode": "30003"}
    response = _twilio(client, values, signature)
    assert (response.status_code, response.content) == (403, b"Signature does not match\n")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.report) == (Delivery.Status.SENT, "")


def test_africas_talking_reports_need_the_secret_path(client, configured, sent_delivery):
    delivery = sent_delivery("africastalking", "ATXid_1")
    form = urllib.parse.urlencode({"id": "ATXid_1", "status": "Success", "phoneNumber": "+2348031234567"})
    refused = client.post("/callbacks/africastalking/guessed-secret/", form, content_type=FORM)
    assert refused.status_code == 403
    delivery.refresh_from_db()
    assert delivery.report == ""
    assert client.post(f"/callbacks/africastalking/{AT_CALLBACK_SECRET}/", form, content_type=FORM).status_code == 200
    delivery.refresh_from_db()
    assert delivery.report == Report.DELIVERED


def test_a_termii_report_signed_with_another_key_is_refused(client, configured, sent_delivery):
    delivery = sent_delivery("termii", "123")
    body = json.dumps({"message_id": "123", "status": "Delivered"}).encode()
    forged = termii_signature(body + b" ")
    response = client.post("/callbacks/termii/", body, content_type="application/json", HTTP_X_TERMII_SIGNATURE=forged)
    assert response.status_code == 403
    delivery.refresh_from_db()
    assert delivery.report == ""
    signed = termii_signature(body)
    assert (
        client.post(
            "/callbacks/termii/", body, content_type="application/json", HTTP_X_TERMII_SIGNATURE=signed
        ).status_code
        == 200
    )
    delivery.refresh_from_db()
    assert delivery.report == Report.DELIVERED


def test_whatsapps_statuses_are_checked_against_the_app_secret(client, configured, sent_delivery):
    delivery = sent_delivery("whatsapp", "wamid.1", channel=WHATSAPP)
    body = _whatsapp_body("wamid.1", "read")
    headers = {"content_type": "application/json"}
    assert client.post("/callbacks/whatsapp/", body, **headers, HTTP_X_HUB_SIGNATURE_256="sha256=00").status_code == 403
    delivery.refresh_from_db()
    assert delivery.report == ""
    signature = whatsapp_signature(body)
    assert client.post("/callbacks/whatsapp/", body, **headers, HTTP_X_HUB_SIGNATURE_256=signature).status_code == 200
    delivery.refresh_from_db()
    assert delivery.report == Report.READ


def test_whatsapps_subscription_is_verified_with_the_verify_token(client, configured):
    query = {"hub.mode": "subscribe", "hub.challenge": "1158201444", "hub.verify_token": WHATSAPP_VERIFY_TOKEN}
    answered = client.get("/callbacks/whatsapp/", query)
    assert (answered.status_code, answered.content) == (200, b"1158201444")
    assert client.get("/callbacks/whatsapp/", {**query, "hub.verify_token": "guess"}).status_code == 403


def test_a_report_of_a_message_not_known_here_is_acknowledged_and_changes_nothing(client, configured, sent_delivery):
    delivery = sent_delivery("twilio", "SM1")
    response = _twilio(client, {"MessageSid": "SM-elsewhere", "MessageStatus": "delivered"})
    assert response.status_code == 200
    delivery.refresh_from_db()
    assert delivery.report == ""


def test_a_failure_reported_after_we_sent_fails_the_delivery_and_sends_delivery_failed(
    client, configured, sent_delivery, merchant, django_capture_on_commit_callbacks, local_receivers, receiver
):
    from webhooks.endpoints import create_endpoint
    from webhooks.models import Event, EventType

    create_endpoint(merchant, receiver.url, event_types=[EventType.DELIVERY_FAILED])
    delivery = sent_delivery("twilio", "SM1")
    with django_capture_on_commit_callbacks(execute=True):
        response = _twilio(client, {"MessageSid": "SM1", "MessageStatus": "undelivered", "ErrorCode": "30005"})
    assert response.status_code == 200
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == (
        Delivery.Status.FAILED,
        "twilio: 30005 Unknown destination handset",
    )
    event = Event.objects.get(type=EventType.DELIVERY_FAILED)
    assert json.loads(event.body)["data"]["object"]["short_code"] == delivery.receipt.short_code


def test_a_body_over_the_bound_is_refused_unread(client, configured, sent_delivery, settings):
    settings.RECECO_CALLBACK_MAX_BYTES = 1024
    body = json.dumps({"message_id": "1", "status": "Delivered", "pad": "x" * 2000}).encode()
    response = client.post("/callbacks/termii/", body, content_type="application/json")
    assert (response.status_code, response.content) == (413, b"Body over 1024 bytes\n")


def test_each_address_may_call_the_callbacks_so_often(client, configured, settings):
    settings.RECECO_CALLBACK_RATE = "3/m"
    answers = [client.post("/callbacks/termii/", b"{}", content_type="application/json") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [403, 403, 403, 429]
    # the seconds left of the minute the calls were counted in
    assert 1 <= int(answers[-1]["Retry-After"]) <= 60


def test_a_get_of_a_report_url_is_405(client, configured):
    assert client.get("/callbacks/twilio/").status_code == 405
