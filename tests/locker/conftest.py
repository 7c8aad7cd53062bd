"""Receipts sent to one customer by two shops, and a way to sign in to the locker as the
customer does: ask, read the code from the text message, type it."""

import re

import pytest

from messaging import sms

PHONE = "+2348031234567"
TYPED_PHONE = "0803 123 4567"  # as a customer in Nigeria types it (RECECO_PHONE_REGION)
OTHER_PHONE = "+2348039999999"
EMAIL = "ada.obi@example.com"


@pytest.fixture
def shop_receipt(merchant, sale):
    """Store a live receipt of ``shop`` (a merchant) with ``overrides`` of the sale fixture."""
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    def make(shop=None, **overrides):
        shop = shop or merchant
        data = {**sale, "merchant_string_id": shop.string_id, "merchant_name": shop.name, **overrides}
        return create_receipt(shop, validate_sale(data), keyed=True).receipt

    return make


@pytest.fixture
def two_shops(shop_receipt, merchant, other_merchant):
    """Mama Put's receipt and Corner Shop's, both sent to PHONE; one of each shop to someone else."""
    return {
        "mama": shop_receipt(
            token="rcpt_mama0001_aaaaaa",
            short_code="MAMA01",
            customer_phone=PHONE,
            transaction_date="2026-11-20T12:00:00Z",
        ),
        "corner": shop_receipt(
            other_merchant,
            token="rcpt_corner01_aaaaaa",
            short_code="CORN01",
            customer_phone=PHONE,
            total_amount=45050,
            items=[{"name": "Bread", "quantity": 1, "unit_price": 45050, "total_price": 45050}],
            transaction_date="2026-11-22T09:30:00Z",
        ),
        "not_theirs": shop_receipt(token="rcpt_others01_aaaaaa", short_code="OTHR01", customer_phone=OTHER_PHONE),
        "not_theirs_either": shop_receipt(
            other_merchant, token="rcpt_others02_aaaaaa", short_code="OTHR02", customer_email=EMAIL
        ),
    }


def ask(client, contact: str, **extra):
    """Post the locker's sign-in form, as the page does."""
    return client.post("/app/my/start", {"contact": contact}, **extra)


def texted_code() -> str:
    """The code of the last sign-in text the SMS backend sent."""
    for message in reversed(sms.outbox):
        found = re.match(r"(\d{6}) is your Receco code", message.body)
        if found:
            return found[1]
    raise AssertionError("no sign-in code was texted")


@pytest.fixture
def signed_in(django_capture_on_commit_callbacks):
    """Sign ``client`` in to the locker with ``contact``'s texted code; return the page's answer."""

    def sign_in(client, contact=TYPED_PHONE):
        with django_capture_on_commit_callbacks(execute=True):
            ask(client, contact)
        return client.post("/app/my/code", {"code": texted_code()})

    return sign_in


# The limits' windows are held still, 10 seconds into an hour (1_800_000_000 is a multiple
# of 3600), so that a test never straddles two.
NOW = 1_800_000_000 + 10


@pytest.fixture(autouse=True)
def _still_clock(monkeypatch):
    from merchants.admission import limits

    monkeypatch.setattr(limits, "clock", lambda: float(NOW))
