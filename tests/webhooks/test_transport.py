"""Sending: success is a 2xx; anything else is tried again with growing pauses for three
days, then fails; an endpoint that kept failing is disabled and its owners are told."""

from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone

from messaging.outbox import claim, resend, send, sweep
from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks.models import Attempt, Delivery, Endpoint
from webhooks.transport import RETRY_FOR, WebhookTransport

pytestmark = pytest.mark.django_db


def _attempt(delivery):
    """Try ``delivery`` again now, as the dispatcher would once its time has come."""
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    ((pk, _, _),) = claim()
    return send(pk)


@pytest.fixture
def delivery(sent, endpoint, merchant, sale, receiver):
    """The delivery of a new receipt's event, whose first attempt the receiver answered with 500."""
    receiver.answers = [500]
    sent(create_receipt, merchant, validate_sale(sale))
    return Delivery.objects.get()


def test_a_2xx_answer_is_success(sent, endpoint, merchant, sale, receiver):
    receiver.status = 204
    sent(create_receipt, merchant, validate_sale(sale))
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("sent", 1, 204)
    attempt = Attempt.objects.get()
    assert (attempt.succeeded, attempt.status_code, attempt.error, attempt.next_attempt_at) == (True, 204, "", None)


def test_a_non_2xx_answer_is_retried_later(delivery):
    assert delivery.status == "retrying"
    assert delivery.last_status_code == 500
    attempt = Attempt.objects.get()
    assert attempt.error == "answered HTTP 500"
    assert attempt.next_attempt_at == delivery.next_attempt_at
    assert timedelta(seconds=50) < delivery.next_attempt_at - timezone.now() < timedelta(minutes=2)


def test_the_pauses_grow_threefold_up_to_six_hours():
    retry = WebhookTransport().retry()
    assert timedelta(minutes=1) <= retry.delay(1) <= timedelta(minutes=1.2)
    assert timedelta(minutes=3) <= retry.delay(2) <= timedelta(minutes=3.6)
    assert timedelta(minutes=27) <= retry.delay(4) <= timedelta(minutes=32.4)
    assert timedelta(hours=6) <= retry.delay(20) <= timedelta(hours=7.2)
    assert (retry.attempts, retry.within) == (None, RETRY_FOR)


def test_the_sweep_sends_a_retry_whose_time_has_come(delivery, receiver, django_capture_on_commit_callbacks):
    assert sweep() == 0  # not yet
    assert sweep(now=delivery.next_attempt_at) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("sent", 2, 200)
    assert len(receiver.requests) == 2
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"]  # the same event, byte for byte


def test_the_receiver_gets_what_it_missed_while_it_was_down(sent, endpoint, merchant, sale, receiver):
    receiver.status = 503  # down for an hour: three sales
    for n in range(3):
        sent(create_receipt, merchant, validate_sale({**sale, "token": f"rcpt_missed_{n:08d}", "short_code": ""}))
    missed = [event["id"] for event in receiver.events()]
    receiver.status = 200
    now = timezone.now()
    for _ in range(10):  # the sweep runs every few minutes
        now += timedelta(minutes=10)
        sweep(now=now)
    assert set(Delivery.objects.values_list("status", flat=True)) == {"sent"}
    delivered = [request["headers"]["Receco-Event-Id"] for request in receiver.requests[3:]]
    assert sorted(delivered) == sorted(missed)


def test_a_timeout_or_refused_connection_is_retried(sent, merchant, sale):
    closed = Endpoint.objects.create(merchant=merchant, url="http://127.0.0.1:9/closed", secret="whsec_x")
    sent(create_receipt, merchant, validate_sale(sale))
    delivery = Delivery.objects.to_endpoint(closed).get()
    assert delivery.status == "retrying"
    assert delivery.last_status_code is None
    assert Attempt.objects.get().error.startswith("ConnectionRefusedError")


def test_after_three_days_it_fails_and_the_endpoint_is_disabled_and_owners_told(
    delivery, owner, member, endpoint, receiver, sent
):
    owner.email, member.email = "olu@mamaput.example.com", "mia@mamaput.example.com"
    owner.save()
    member.save()
    Delivery.objects.filter(pk=delivery.pk).update(created_at=timezone.now() - RETRY_FOR)
    receiver.status = 500
    assert sent(_attempt, delivery).status == "failed"
    endpoint.refresh_from_db()
    assert endpoint.enabled is False
    assert endpoint.disabled_reason.endswith("its deliveries failed for 3 days")
    (message,) = mail.outbox
    assert message.to == ["olu@mamaput.example.com"]  # owners only
    assert message.subject == f"Receco: webhook endpoint {endpoint.url} disabled"
    assert f"/admin/webhooks/endpoint/{endpoint.pk}/change/" in message.body


def test_an_endpoint_that_succeeded_since_is_not_disabled(delivery, endpoint, receiver, sent):
    Delivery.objects.filter(pk=delivery.pk).update(created_at=timezone.now() - RETRY_FOR)
    Endpoint.objects.filter(pk=endpoint.pk).update(failing_since=None)  # another delivery succeeded meanwhile
    receiver.status = 500
    assert sent(_attempt, delivery).status == "failed"
    endpoint.refresh_from_db()
    assert endpoint.enabled is True
    assert mail.outbox == []


def test_a_delivery_is_sent_once_when_the_dispatcher_runs_twice(delivery, receiver):
    Delivery.objects.filter(pk=delivery.pk).update(status="sent")
    assert claim() == []
    assert send(delivery.pk) is None  # not claimed: not sent
    assert len(receiver.requests) == 1


def test_resend_sends_the_event_again_as_a_new_delivery(delivery, receiver, sent):
    again = sent(resend, delivery)
    again.refresh_from_db()
    assert again.status == "sent"
    assert receiver.requests[-1]["body"] == receiver.requests[0]["body"]


def test_a_delivery_to_an_endpoint_disabled_meanwhile_fails_unsent(delivery, endpoint, receiver, sent):
    endpoint.enabled = False
    endpoint.save()
    assert sent(_attempt, delivery).status == "failed"
    assert len(receiver.requests) == 1  # the first attempt only
    assert Attempt.objects.filter(error="endpoint disabled").count() == 1
    assert mail.outbox == []


def test_a_delivery_whose_endpoint_was_deleted_during_the_sale_is_dropped_not_retried(
    delivery, endpoint, receiver, sent
):
    # The outbox has no constraint in the database (webhooks.models): an endpoint deleted
    # while a sale was being stored leaves that sale's delivery pointing at nothing.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM webhooks_endpoint WHERE id = %s", [endpoint.pk])
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))

    assert sent(sweep) == 1
    assert not Delivery.objects.filter(pk=delivery.pk).exists()
    assert not Attempt.objects.exists()
    assert len(receiver.requests) == 1  # the first attempt only
    assert sent(sweep) == 0


def test_deleting_an_endpoint_or_a_receipt_still_cascades(delivery, endpoint):
    event = delivery.event
    receipt = event.receipt
    endpoint.delete()
    assert not Delivery.objects.exists()
    assert not Attempt.objects.exists()
    receipt.delete()
    event.refresh_from_db()
    assert event.receipt_id is None
