"""The "Not your receipt?" link of every message (customers.views.privacy, receipts.detach_links):
GET shows which receipt and contact, POST (with its CSRF token) detaches that one purchase;
once only, refused when altered or too old, "already removed" once the contact is gone."""

import json
import re
import time
from datetime import timedelta

import pytest
from django.core import mail, signing
from django.test import Client

from messaging import sms
from messaging.models import Delivery
from privacy.erasure import erase_contact
from privacy.models import ErasureRecord
from receipts import detach_links, refunds, writer
from receipts.models import Receipt
from tests.privacy.conftest import EMAIL, PHONE, followed
from webhooks.models import Event

pytestmark = pytest.mark.django_db

_LINK = re.compile(r"Not yours\? (\S+)")


@pytest.fixture
def receipts(customer_receipts):
    (ours, other_shops), _ = customer_receipts
    return ours, other_shops


def _sms_link(receipt) -> str:
    """The text message's "Not yours?" link, followed from its short path to the page."""
    (text,) = [message.body for message in sms.outbox if f"/r/{receipt.short_code}\n" in message.body]
    return followed(_LINK.search(text)[1])


def _path_and_key(link: str) -> tuple[str, str]:
    path, _, query = link.partition("?k=")
    return path, query


def _title(response) -> str:
    return re.search(r"<h1>(.*?)</h1>", response.content.decode())[1]


def test_every_message_carries_its_link(receipts):
    ours, _ = receipts
    text = next(message.body for message in sms.outbox if "CUSTA1" in message.body)
    assert text.startswith("Mama Put Kitchen, NGN 1,300.00: https://receipts.example.test/r/CUSTA1\n")
    assert re.fullmatch(
        r".*\nNot yours\? https://receipts\.example\.test/n/CUSTA1\?k=p[\w-]{8}:\w+:[\w-]{16}", text, re.DOTALL
    )
    assert followed(_LINK.search(text)[1]).startswith("/app/receipt/CUSTA1/not-mine?k=p")
    (email,) = [message for message in mail.outbox if message.to == [EMAIL]]
    link = re.search(r"Not your receipt\? Remove this address from it: (\S+)", email.body)[1]
    assert link.startswith("https://receipts.example.test/app/receipt/CUSTA1/not-mine?k=e")
    html = email.alternatives[0][0]
    assert f'Not your receipt? <a href="{link}" style="color:#111827;">Remove this address from it</a>' in html
    for message in (text, email.body, html):
        assert "8031234567" not in message
        assert "lovelace" not in message.lower()


def test_the_link_shows_the_receipt_and_changes_nothing(client, receipts):
    ours, _ = receipts
    response = client.get(_sms_link(ours))
    assert response.status_code == 200
    assert _title(response) == "Not your receipt?"
    page = response.content.decode()
    assert "This receipt from <strong>Mama Put Kitchen</strong>, ₦1,300.00 on 22 November 2026" in page
    assert "was sent to <strong>+234*******67</strong>" in page
    assert "Remove my number from this receipt" in page
    assert PHONE not in page
    assert response["Cache-Control"] == "private, no-store"
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    ours.refresh_from_db()
    assert ours.customer_phone == PHONE


def test_posting_detaches_that_one_purchase_and_nothing_else(client, receipts):
    ours, other_shops = receipts
    path, key = _path_and_key(_sms_link(ours))
    response = client.post(path, {"k": key})
    assert response.status_code == 200
    assert _title(response) == "Removed from this receipt"
    assert "Your number <strong>+234*******67</strong> is no longer on this receipt" in response.content.decode()
    ours.refresh_from_db()
    assert (ours.customer_phone, ours.customer_email) == (None, EMAIL)
    assert Delivery.objects.get(receipt=ours, channel="sms").destination == ""
    assert Delivery.objects.get(receipt=ours, channel="email").destination == EMAIL
    (event,) = Event.objects.filter(receipt=ours)
    assert json.loads(event.body)["data"]["object"]["customer_phone"] is None
    other_shops.refresh_from_db()
    assert other_shops.customer_phone == PHONE  # the customer's other receipts keep it
    record = ErasureRecord.objects.get()
    assert (record.via, record.kind, record.counts) == (
        "link",
        "phone",
        {"receipts": 1, "deliveries": 1, "webhook_events": 1},
    )


def test_the_link_works_once(client, receipts):
    ours, _ = receipts
    link = _sms_link(ours)
    path, key = _path_and_key(link)
    assert client.post(path, {"k": key}).status_code == 200
    again = client.post(path, {"k": key})
    assert (again.status_code, _title(again)) == (200, "Already removed")
    assert "This receipt no longer holds the number this link was sent to" in again.content.decode()
    assert (client.get(link).status_code, _title(client.get(link))) == (200, "Already removed")
    assert ErasureRecord.objects.count() == 1


def test_posting_needs_the_pages_csrf_token(receipts):
    ours, _ = receipts
    browser = Client(enforce_csrf_checks=True)
    link = _sms_link(ours)
    path, key = _path_and_key(link)
    assert browser.post(path, {"k": key}).status_code == 403
    assert Receipt.objects.get(pk=ours.pk).customer_phone == PHONE
    page = browser.get(link).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    assert browser.post(path, {"k": key, "csrfmiddlewaretoken": token}).status_code == 200
    assert Receipt.objects.get(pk=ours.pk).customer_phone is None


@pytest.mark.parametrize(
    "alter",
    [
        lambda key: key[:-1] + ("A" if key[-1] != "A" else "B"),  # the signature
        lambda key: "e" + key[1:],  # the field it names
        lambda key: key[:-4],  # cut short
        lambda key: "",
        lambda key: "p12345678:1abcde:0123456789abcdef",  # made up
    ],
    ids=["signature", "field", "cut short", "missing", "made up"],
)
def test_an_altered_link_is_refused(client, receipts, alter):
    ours, _ = receipts
    path, key = _path_and_key(_sms_link(ours))
    for response in (client.get(f"{path}?k={alter(key)}"), client.post(path, {"k": alter(key)})):
        assert response.status_code == 400
        assert _title(response) == "This link is not valid"
        assert "Open it straight from the message you received." in response.content.decode()
    assert Receipt.objects.get(pk=ours.pk).customer_phone == PHONE


def test_a_link_opens_no_other_receipt(client, receipts):
    ours, other_shops = receipts
    _, key = _path_and_key(_sms_link(ours))
    response = client.post(f"/app/receipt/{other_shops.short_code}/not-mine", {"k": key})
    assert (response.status_code, _title(response)) == (400, "This link is not valid")
    assert Receipt.objects.get(pk=other_shops.pk).customer_phone == PHONE


def test_a_link_older_than_the_contact_retention_has_expired(client, receipts, monkeypatch, settings):
    ours, _ = receipts
    settings.RECECO_CONTACT_RETENTION_DAYS = 180
    then = signing.b62_encode(int(time.time() - timedelta(days=180, seconds=1).total_seconds()))
    with monkeypatch.context() as patched:
        patched.setattr(signing.TimestampSigner, "timestamp", lambda self: then)
        old = detach_links.key(ours, "customer_phone", PHONE)
    response = client.post(f"/app/receipt/{ours.short_code}/not-mine", {"k": old})
    assert (response.status_code, _title(response)) == (410, "This link has expired")
    assert "These links work for 180 days after the message was sent" in response.content.decode()
    assert Receipt.objects.get(pk=ours.pk).customer_phone == PHONE


def test_once_the_contact_is_erased_the_link_says_already_removed(client, receipts):
    ours, _ = receipts
    link = _sms_link(ours)
    erase_contact(PHONE, via="locker")
    response = client.get(link)
    assert (response.status_code, _title(response)) == (200, "Already removed")


def test_a_receipt_removed_by_retention_is_already_removed(client, receipts):
    ours, _ = receipts
    link = _sms_link(ours)
    writer.remove([ours.pk])
    path, key = _path_and_key(link)
    response = client.post(path, {"k": key})
    assert (response.status_code, _title(response)) == (200, "Already removed")


def test_a_sales_link_detaches_its_refunds_too(client, receipts, sent):
    ours, _ = receipts
    validated = refunds.validate_refund({"token": ours.token, "amount": 50000})
    refund = sent(refunds.refund, ours, validated, keyed=True).receipt
    assert Receipt.objects.get(pk=refund.pk).customer_phone == PHONE
    path, key = _path_and_key(_sms_link(ours))
    client.post(path, {"k": key})
    assert Receipt.objects.get(pk=refund.pk).customer_phone is None
    assert not Delivery.objects.filter(destination=PHONE, receipt_id__in=[ours.pk, refund.pk]).exists()
    assert ErasureRecord.objects.get().counts == {"receipts": 2, "deliveries": 2, "webhook_events": 2}
