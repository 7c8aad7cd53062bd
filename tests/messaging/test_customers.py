"""A contact the customer gave is sent the receipt: with a sale, later, with a refund
(messaging.customers, the receipts hook); nothing before the change commits."""

import pytest
from django.core import mail

from messaging import sms
from messaging.models import Delivery
from receipts.writer import update_contact

pytestmark = pytest.mark.django_db

EMAIL = "customer@example.com"
PHONE = "+2348031234589"


def test_update_receipt_contact_sends_the_receipt(api, receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        status, _ = api.post("updateReceiptContact", {"token": receipt.token, "email": EMAIL, "phone": PHONE})
    assert status == 200
    assert [m.to for m in mail.outbox] == [[EMAIL]]
    assert [m.to for m in sms.outbox] == [PHONE]
    assert sorted(receipt.deliveries.values_list("channel", "status")) == [("email", "sent"), ("sms", "sent")]


def test_a_sale_that_carries_a_contact_sends_the_receipt_once(api, sale, django_capture_on_commit_callbacks):
    body = {**sale, "customer_email": EMAIL}
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("createReceiptFromPOS", body)[0] == 200
        assert api.post("createReceiptFromPOS", body)[0] == 200  # the idempotent replay
    assert len(mail.outbox) == 1
    assert Delivery.objects.count() == 1


def test_nothing_is_sent_before_the_transaction_commits(receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        update_contact(receipt, EMAIL, None)
    assert not mail.outbox
    assert receipt.deliveries.get().status == "pending"
    assert len(callbacks) == 1


def test_a_queue_that_cannot_be_reached_does_not_fail_the_request(
    api, receipt, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(*args, **kwargs):
        raise ConnectionError("queue down")

    monkeypatch.setattr("messaging.outbox.wake", broken)
    with django_capture_on_commit_callbacks(execute=True):
        status, _ = api.post("updateReceiptContact", {"token": receipt.token, "email": EMAIL})
    assert status == 200
    assert receipt.deliveries.get().status == "pending"  # for the sweep
