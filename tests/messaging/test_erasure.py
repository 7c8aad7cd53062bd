"""Erasing customers' contacts from the outbox (messaging.erasure): each delivery keeps its
record without its destination; one not sent yet never is."""

from datetime import timedelta

import pytest
from django.utils import timezone

from messaging import erasure, sms
from messaging.models import Delivery
from messaging.outbox import dispatch
from receipts.writer import update_contact

pytestmark = pytest.mark.django_db

PHONE = "+2348031234589"


def test_a_sent_delivery_keeps_its_record_and_loses_its_destination(sent, stored):
    sent(update_contact, stored, "Ada@Example.com", PHONE)
    assert erasure.forget(erasure.to_contact("email", "ada@example.com")) == 1
    email, text = Delivery.objects.order_by("channel")
    assert (email.channel, email.destination, email.status, email.masked_destination) == (
        "email",
        "",
        "sent",
        "(erased)",
    )
    assert (text.channel, text.destination) == ("sms", PHONE)
    assert erasure.forget(erasure.to_contact("email", "ada@example.com")) == 0


def test_one_not_sent_yet_fails_and_is_never_sent(stored):
    update_contact(stored, None, PHONE)  # committed with the test: its dispatcher never woken
    assert erasure.forget(erasure.to_contact("sms", PHONE)) == 1
    dispatch(threads=False)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.last_error, delivery.next_attempt_at) == ("failed", erasure.ERASED, None)
    assert sms.outbox == []


def test_one_erased_while_it_was_being_sent_is_not_sent_again(stored):
    from messaging.transports import Failed, SmsTransport

    update_contact(stored, None, PHONE)
    delivery = Delivery.objects.get()
    delivery.destination = ""
    with pytest.raises(Failed, match=erasure.ERASED) as failed:
        SmsTransport().send(delivery)
    assert failed.value.permanent


def test_retention_takes_customers_deliveries_made_before_its_cutoff_only(stored, merchant):
    update_contact(stored, None, PHONE)
    Delivery.objects.create(channel="webhook", merchant=merchant, destination="7", payload_id=1)
    later = timezone.now() + timedelta(seconds=1)
    assert erasure.forget(erasure.made_before(stored.created_at)) == 0
    assert erasure.forget(erasure.made_before(later)) == 1
    assert sorted(Delivery.objects.values_list("channel", "destination")) == [("sms", ""), ("webhook", "7")]
