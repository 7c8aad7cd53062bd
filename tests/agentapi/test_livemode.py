"""A receipt made with a test key, or for a test merchant, is a test receipt."""

import pytest

from merchants.keys import issue_key
from merchants.models import Merchant
from receipts.models import Receipt
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _created(api, sale, **headers) -> Receipt:
    status, body = api.post("createReceiptFromPOS", sale, **headers)
    assert status == 200, body
    return Receipt.objects.get(pk=body["result"]["data"]["id"])


def test_a_test_key_makes_a_test_receipt(api, sale, test_key):
    assert _created(api, sale, **bearer(test_key)).livemode is False


def test_a_live_key_makes_a_live_receipt(api, sale, live_key):
    assert _created(api, sale, **bearer(live_key)).livemode is True


def test_no_key_makes_a_live_receipt_for_a_real_merchant(api, sale):
    assert _created(api, sale).livemode is True


def test_a_test_merchant_makes_test_receipts_without_a_key(api, sale):
    receipt = _created(api, {**sale, "merchant_string_id": "test-new-shop"})
    assert receipt.livemode is False
    assert Merchant.objects.get(string_id="test-new-shop").is_test is True


def test_a_live_key_of_a_test_merchant_still_makes_test_receipts(api, sale, db):
    shop = Merchant.objects.create(string_id="sandbox", name="Sandbox", is_test=True)
    issued = issue_key(shop, "live")
    assert _created(api, {**sale, "merchant_string_id": "sandbox"}, **bearer(issued)).livemode is False
