"""The "Not your receipt?" link's key (receipts.detach_links): signed for one receipt, naming
a contact field and a keyed digest of the contact, never the contact; refused altered, for
another receipt or older than RECECO_CONTACT_RETENTION_DAYS."""

import time
from datetime import timedelta

import pytest
from django.core import signing

from receipts import detach_links
from receipts.detach_links import BadLink, ExpiredLink, Link

pytestmark = pytest.mark.django_db

PHONE = "+2348031234567"


def test_the_link_names_the_receipt_by_short_code_and_holds_no_contact(receipt):
    url = detach_links.url(receipt, "customer_phone", PHONE)
    assert url.startswith("https://receipts.example.test/app/receipt/K7P2QX/not-mine?k=p")
    key = url.partition("?k=")[2]
    assert len(key) <= 40
    assert "8031234567" not in url
    assert detach_links.read("K7P2QX", key) == Link("customer_phone", detach_links.digest(PHONE))


def test_the_digest_is_keyed_and_an_address_is_one_in_any_case(settings):
    digest = detach_links.digest("Ada@Example.com")
    assert digest == detach_links.digest("ada@example.com")
    assert len(digest) == 8
    settings.SECRET_KEY = "another-secret-key-for-this-test-only-0123456789"
    assert detach_links.digest("ada@example.com") != digest


def test_names_says_which_contact_while_the_receipt_holds_it(receipt):
    receipt.customer_phone = PHONE
    link = detach_links.read(receipt.short_code, detach_links.key(receipt, "customer_phone", PHONE))
    assert detach_links.names(receipt, link) == PHONE
    receipt.customer_phone = "+2348059876543"
    assert detach_links.names(receipt, link) is None
    receipt.customer_phone = None
    assert detach_links.names(receipt, link) is None


def test_a_key_for_another_receipt_or_altered_is_bad(receipt):
    key = detach_links.key(receipt, "customer_phone", PHONE)
    for short_code, value in [
        ("K7P2QY", key),
        ("K7P2QX", key[:-1] + ("x" if key[-1] != "x" else "y")),
        ("K7P2QX", "p" + key),
    ]:
        with pytest.raises(BadLink):
            detach_links.read(short_code, value)


def test_a_key_holds_for_the_contact_retention(receipt, monkeypatch, settings):
    settings.RECECO_CONTACT_RETENTION_DAYS = 30

    def made(ago: timedelta) -> str:
        then = signing.b62_encode(int(time.time() - ago.total_seconds()))
        with monkeypatch.context() as patched:
            patched.setattr(signing.TimestampSigner, "timestamp", lambda self: then)
            return detach_links.key(receipt, "customer_phone", PHONE)

    assert detach_links.read("K7P2QX", made(timedelta(days=30) - timedelta(minutes=1))).field == "customer_phone"
    with pytest.raises(ExpiredLink):
        detach_links.read("K7P2QX", made(timedelta(days=30, seconds=1)))
