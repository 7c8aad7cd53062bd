"""A registered merchant's receipts carry its record's name, logo and colour, never what a
request says; only test- merchants, which belong to nobody, show what their sales say."""

import pytest

from receipts.models import Receipt
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"
PHISHING = "Your account is locked, verify at http://evil.example"


def test_a_registered_merchants_record_wins_over_the_body(api, sale, merchant):
    body = {**sale, "merchant_name": PHISHING, "merchant_logo": "https://evil.example/x.png", "accent_color": "#ff0000"}
    assert api.post(PATH, body)[0] == 200
    receipt = Receipt.objects.get()
    assert (receipt.merchant_name, receipt.merchant_logo, receipt.accent_color) == (
        "Mama Put Kitchen",
        "https://cdn.example.com/mama-put.png",
        "#c2410c",
    )


def test_a_keyed_sale_takes_the_record_too(api, sale, live_key):
    assert api.post(PATH, {**sale, "merchant_name": "Another name"}, **bearer(live_key))[0] == 200
    assert Receipt.objects.get().merchant_name == "Mama Put Kitchen"


def test_a_test_merchant_shows_what_its_sales_say(api, sale):
    body = {**sale, "merchant_string_id": "test-stall", "merchant_name": "Stall 4", "accent_color": "#123456"}
    assert api.post(PATH, body)[0] == 200
    receipt = Receipt.objects.get()
    assert (receipt.merchant_name, receipt.accent_color, receipt.livemode) == ("Stall 4", "#123456", False)
