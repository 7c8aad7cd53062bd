"""Sending a sale's receipt again from the dashboard (dashboard.resend): to its contact or to
a new one, through the outbox, under the daily limits of any send, in the audit trail."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from dashboard.resend import NO_CONTACT, outcome_words, resend
from merchants.models import AuditEntry
from messaging import sms
from messaging.customers import DeliveryLimited
from messaging.models import Delivery
from receco.errors import InvalidInput

pytestmark = pytest.mark.django_db

PHONE = "+2348031234589"


@pytest.fixture
def sent_an_hour_ago(receipt_factory):
    """A sale sent to the customer's phone an hour ago (out of the double-tap window)."""
    sale = receipt_factory(customer_phone=PHONE)
    Delivery.objects.filter(receipt=sale).update(created_at=timezone.now() - timedelta(hours=1), status="sent")
    return sale


def test_it_sends_the_receipt_again_to_its_contact(sent_an_hour_ago, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        planned = resend(sent_an_hour_ago)
    assert outcome_words(planned) == "Sent again to +234*******89 (Text message)."
    assert [message.to for message in sms.outbox] == [PHONE]
    assert sent_an_hour_ago.deliveries.count() == 2
    entry = AuditEntry.objects.get(object_repr=f"sale {sent_an_hour_ago.short_code}")
    assert entry.changes_dict == {"sent again to": ["", "+234*******89"]}


def test_a_new_contact_is_stored_and_sent_the_receipt(sent_an_hour_ago, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        planned = resend(sent_an_hour_ago, email="ada@example.com")
    assert outcome_words(planned) == "Sent again to a*******@example.com (Email)."
    assert [message.to for message in mail.outbox] == [["ada@example.com"]]
    sent_an_hour_ago.refresh_from_db()
    assert (sent_an_hour_ago.customer_email, sent_an_hour_ago.customer_phone) == ("ada@example.com", PHONE)


def test_a_second_tap_moments_later_is_not_sent_twice(receipt_factory, django_capture_on_commit_callbacks):
    sale = receipt_factory(customer_phone=PHONE)  # sent just now, with the sale
    with django_capture_on_commit_callbacks(execute=True):
        planned = resend(sale)
    assert outcome_words(planned) == (
        "Already sent to +234*******89 (Text message) in the last few minutes: not sent twice."
    )
    assert sale.deliveries.count() == 1


def test_the_daily_limit_refuses_it_and_nothing_is_stored(settings, sent_an_hour_ago):
    settings.RECECO_DELIVERY_RECEIPT_DAILY_LIMIT = 1
    with pytest.raises(DeliveryLimited) as refused:
        resend(sent_an_hour_ago, email="ada@example.com")
    assert refused.value.message == "This receipt has been sent 1 times today, the most allowed; try again later"
    sent_an_hour_ago.refresh_from_db()
    assert sent_an_hour_ago.customer_email is None
    assert sent_an_hour_ago.deliveries.count() == 1
    assert not AuditEntry.objects.filter(object_repr=f"sale {sent_an_hour_ago.short_code}").exists()


def test_a_sale_without_a_contact_needs_one(receipt):
    with pytest.raises(InvalidInput) as refused:
        resend(receipt)
    assert refused.value.message == NO_CONTACT
