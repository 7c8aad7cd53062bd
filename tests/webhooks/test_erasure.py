"""Erasing customers' contacts from the webhook bodies kept (webhooks.erasure): the field
nulled, every other byte of the body as it was; a receipt removed takes its events along."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from messaging.models import Delivery
from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks import erasure
from webhooks.models import Attempt, Event

pytestmark = pytest.mark.django_db

PHONE = "+2348031234567"


@pytest.fixture
def sold(sent, endpoint, merchant, sale):
    def sell(token, short_code, **contact):
        data = validate_sale({**sale, "token": token, "short_code": short_code, **contact})
        return sent(create_receipt, merchant, data, keyed=True).receipt

    return sell


def _object(receipt) -> dict:
    return json.loads(Event.objects.get(receipt=receipt).body)["data"]["object"]


def test_the_contact_is_nulled_and_the_rest_of_the_body_kept(sold):
    receipt = sold("rcpt_webhook_body_01", "WHBDY1", customer_phone=PHONE, customer_email="Ada@Example.com")
    before = Event.objects.get(receipt=receipt).body
    assert erasure.erase_contact("customer_phone", PHONE) == 1
    after = Event.objects.get(receipt=receipt).body
    assert after == before.replace(f'"customer_phone":"{PHONE}"', '"customer_phone":null')
    assert erasure.erase_contact("customer_email", "ada@example.com") == 1
    assert (_object(receipt)["customer_email"], _object(receipt)["customer_phone"]) == (None, None)
    assert erasure.erase_contact("customer_phone", PHONE) == 0


def test_a_number_elsewhere_in_the_body_is_not_a_contact_field(sold):
    # The search finds the number anywhere; only the contact fields are erased.
    receipt = sold("rcpt_webhook_body_02", "WHBDY2", location=f"Till {PHONE}")
    assert erasure.erase_contact("customer_phone", PHONE) == 0
    assert _object(receipt)["location"] == f"Till {PHONE}"


def test_detach_changes_one_receipts_events(sold):
    first = sold("rcpt_webhook_body_03", "WHBDY3", customer_phone=PHONE)
    second = sold("rcpt_webhook_body_04", "WHBDY4", customer_phone=PHONE)
    assert erasure.detach(first.pk, "customer_phone", PHONE) == 1
    assert (_object(first)["customer_phone"], _object(second)["customer_phone"]) == (None, PHONE)


def test_retention_empties_the_contacts_of_events_made_before_its_cutoff(sold, monkeypatch):
    monkeypatch.setattr(erasure, "SCAN", 1)
    old = sold("rcpt_webhook_body_05", "WHBDY5", customer_phone=PHONE, customer_email="ada@example.com")
    new = sold("rcpt_webhook_body_06", "WHBDY6", customer_phone=PHONE)
    Event.objects.filter(receipt=old).update(created_at=timezone.now() - timedelta(days=200))
    assert erasure.made_before(timezone.now() - timedelta(days=180)) == 1
    assert (_object(old)["customer_phone"], _object(old)["customer_email"]) == (None, None)
    assert _object(new)["customer_phone"] == PHONE
    assert erasure.made_before(timezone.now() - timedelta(days=180)) == 0


def test_a_receipts_events_go_with_it_and_their_deliveries_too(sold):
    receipt = sold("rcpt_webhook_body_07", "WHBDY7")
    kept = sold("rcpt_webhook_body_08", "WHBDY8")
    event = Event.objects.get(receipt=receipt)
    assert Attempt.objects.filter(delivery__payload_id=event.pk).exists()
    assert erasure.delete_of_receipts([receipt.pk]) == 1
    assert list(Event.objects.values_list("receipt_id", flat=True)) == [kept.pk]
    assert not Delivery.objects.filter(payload_id=event.pk).exists()
    assert not Attempt.objects.filter(delivery__payload_id=event.pk).exists()
    assert Attempt.objects.count() == 1  # the other event's


def test_a_message_of_another_channel_with_a_payload_of_the_same_id_stays(sold):
    """The outbox holds every channel: a locker sign-in text's payload (its sign-in's id)
    may have an event's id; only the webhook deliveries of the events go."""
    receipt = sold("rcpt_webhook_body_09", "WHBDY9")
    event = Event.objects.get(receipt=receipt)
    text = Delivery.objects.create(channel="sms", destination=PHONE, payload_id=event.pk)
    assert erasure.delete_of_receipts([receipt.pk]) == 1
    assert list(Delivery.objects.filter(payload_id=event.pk)) == [text]


def test_the_deliveries_of_many_events_go_in_a_few_statements_not_one_per_event(sold, django_assert_max_num_queries):
    receipts = [sold(f"rcpt_webhook_many_{n:03d}", f"WHMNY{n}") for n in range(5)]
    with django_assert_max_num_queries(5):
        assert erasure.delete_of_receipts([receipt.pk for receipt in receipts]) == 5
    assert not Delivery.objects.filter(channel="webhook").exists()


def test_retention_rewrites_many_bodies_in_a_few_statements_not_one_per_body(sold, django_assert_max_num_queries):
    receipts = [sold(f"rcpt_webhook_old_{n:04d}", f"WHOLD{n}", customer_phone=PHONE) for n in range(5)]
    Event.objects.update(created_at=timezone.now() - timedelta(days=200))
    # The last id, the bodies, their rewrite, and the savepoint around it (in the test's transaction).
    with django_assert_max_num_queries(5):
        assert erasure.made_before(timezone.now() - timedelta(days=180)) == 5
    assert [_object(receipt)["customer_phone"] for receipt in receipts] == [None] * 5
