"""Receco cannot be used to spam: daily limits per receipt and per destination, far lower
for what is asked for without the merchant's key, answered honestly.

Replays the hostile review's attack: unkeyed creates for a real merchant with
customer_phone/customer_email and a phishing merchant_name sent 20 SMS and 20 emails.
"""

import pytest
from django.core import mail

from messaging import sms
from messaging.models import Delivery
from receipts.models import Receipt
from tests.helpers import bearer, error_envelope

pytestmark = pytest.mark.django_db

EMAIL = "victim@example.com"
PHONE = "+2348031234589"
PHISHING = "Your account is locked, verify at http://evil.example"


def _sale(sale, n, **contact):
    return {**sale, "token": f"rcpt_spam{n:04d}_aaaaaa", "short_code": None, "merchant_name": PHISHING, **contact}


def test_the_spam_run_of_the_review_sends_three_of_each_with_our_text_only(api, sale, sent):
    answers = [
        sent(api.post, "createReceiptFromPOS", _sale(sale, n, customer_email=EMAIL, customer_phone=PHONE))
        for n in range(20)
    ]
    assert all(status == 200 for status, _ in answers)  # every sale is stored: a limit never loses one
    assert Receipt.objects.count() == 20
    assert len(mail.outbox) == 3
    assert len(sms.outbox) == 3
    for text in [m.body for m in sms.outbox] + [m.subject + m.body for m in mail.outbox]:
        assert "evil" not in text
        assert "Mama Put Kitchen" in text
    # ... and each refused one is reported as refused, not as sent.
    assert answers[3][1]["result"]["data"]["deliveries"] == [
        {
            "channel": "email",
            "destination": "v*******@example.com",
            "status": "limited",
            "message": "email: v*******@example.com has been sent 3 receipts today without a merchant's API key, "
            "the most allowed",
        },
        {
            "channel": "sms",
            "destination": "+234*******89",
            "status": "limited",
            "message": "phone: +234*******89 has been sent 3 receipts today without a merchant's API key, "
            "the most allowed",
        },
    ]


def test_a_merchants_key_may_send_up_to_the_destination_limit(api, sale, live_key, sent, settings):
    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT = 4
    for n in range(6):
        sent(api.post, "createReceiptFromPOS", _sale(sale, n, customer_phone=PHONE), **bearer(live_key))
    assert len(sms.outbox) == 4
    assert Delivery.objects.filter(keyed=True).count() == 4


def test_the_limit_counts_across_receipts_and_merchants(api, sale, other_merchant, sent, receipt_factory, settings):
    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY = 2
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    theirs = {**sale, "merchant_string_id": other_merchant.string_id, "token": "rcpt_theirs01_aaaaaa"}
    receipts = [
        receipt_factory(token="rcpt_first0001_aaaaaa", short_code="FIRST1"),
        receipt_factory(token="rcpt_second001_aaaaaa", short_code="SECND2"),
        create_receipt(other_merchant, validate_sale({**theirs, "short_code": "THEIR3"}), keyed=True).receipt,
    ]
    statuses = [
        sent(api.post, "updateReceiptContact", {"token": receipt.token, "phone": PHONE})[0] for receipt in receipts
    ]
    assert statuses == [200, 200, 429]
    assert sent(api.post, "updateReceiptContact", {"token": receipts[2].token, "email": EMAIL})[0] == 200


def test_update_receipt_contact_says_when_a_limit_refuses_and_stores_nothing(api, receipt_factory, sent):
    receipts = [receipt_factory(token=f"rcpt_rcpt{n:04d}_aaaaaa", short_code=f"RCPT0{n}") for n in range(4)]
    for receipt in receipts[:3]:
        assert sent(api.post, "updateReceiptContact", {"token": receipt.token, "phone": PHONE})[0] == 200
    response = api.request(
        "POST",
        "updateReceiptContact",
        data={"token": receipts[3].token, "email": "other@example.com", "phone": PHONE},
        content_type="application/json",
    )
    assert response.status_code == 429
    assert response.json() == error_envelope(
        429,
        "TOO_MANY_REQUESTS",
        "phone: +234*******89 has been sent 3 receipts today without a merchant's API key, the most allowed; "
        "try again later",
        "updateReceiptContact",
    )
    assert 86000 < int(response["Retry-After"]) <= 86401
    receipts[3].refresh_from_db()
    assert (receipts[3].customer_email, receipts[3].customer_phone) == (None, None)  # all or nothing
    assert not receipts[3].deliveries.exists()


def test_one_receipt_is_sent_at_most_five_times_a_day(api, receipt, sent):
    for n in range(5):
        assert sent(api.post, "updateReceiptContact", {"token": receipt.token, "email": f"c{n}@example.com"})[0] == 200
    status, body = api.post("updateReceiptContact", {"token": receipt.token, "email": "c9@example.com"})
    assert status == 429
    assert body["error"]["message"] == "This receipt has been sent 5 times today, the most allowed; try again later"


def test_the_same_contact_twice_is_one_message_and_says_so(api, receipt, sent):
    sent(api.post, "updateReceiptContact", {"token": receipt.token, "email": EMAIL})
    status, body = sent(api.post, "updateReceiptContact", {"token": receipt.token, "email": EMAIL})
    assert status == 200
    assert body["result"]["data"] == {
        "success": True,
        "deliveries": [{"channel": "email", "destination": "v*******@example.com", "status": "duplicate"}],
    }
    assert len(mail.outbox) == 1


def test_test_receipts_are_held_to_the_receipt_limit_only(api, test_receipt, sent, settings):
    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY = 1
    for n in range(3):
        receipt = Receipt.objects.get(pk=test_receipt.pk)
        status, _ = sent(api.post, "updateReceiptContact", {"token": receipt.token, "phone": f"+23480312345{n}0"})
        assert status == 200
    status, _ = sent(api.post, "updateReceiptContact", {"token": test_receipt.token, "email": EMAIL})
    assert status == 200


def test_the_page_form_explains_the_destination_limit(client, receipt_factory, sent):
    receipts = [receipt_factory(token=f"rcpt_page{n:04d}_aaaaaa", short_code=f"PAGE0{n}") for n in range(4)]
    for receipt in receipts[:3]:
        sent(client.post, f"/app/receipt/{receipt.token}/send", {"phone": PHONE})
    response = client.post(f"/app/receipt/{receipts[3].token}/send", {"phone": PHONE})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert "This number has been sent as many receipts as we can send it today." in response.content.decode()
    assert len(sms.outbox) == 3


def test_an_email_for_a_sale_sent_without_the_key_carries_none_of_its_free_text(api, sale, sent):
    lure = "Call 0800 000 0000 for your refund"
    body = {**sale, "location": lure, "items": [{"name": lure, "quantity": 1, "unit_price": 1, "total_price": 1}]}
    sent(api.post, "createReceiptFromPOS", {**body, "total_amount": 1, "customer_email": EMAIL})
    (message,) = mail.outbox
    assert lure not in message.body
    assert lure not in message.alternatives[0][0]
    assert "Mama Put Kitchen" in message.body
    assert Receipt.objects.get().message_url in message.body


def test_an_email_for_a_keyed_sale_lists_its_items(api, sale, live_key, sent):
    sent(api.post, "createReceiptFromPOS", {**sale, "customer_email": EMAIL}, **bearer(live_key))
    (message,) = mail.outbox
    assert "Jollof rice" in message.body
    assert "Lekki Phase 1" in message.body
