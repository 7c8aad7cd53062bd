"""test- merchants are created by the first sale that names them, with that sale, and
anonymous callers may create only so many of them from one address."""

import pytest

from merchants.models import Merchant
from receipts.models import Receipt
from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db

PATH = "createReceiptFromPOS"


def _post(api, sale, ip="203.0.113.7"):
    response = api.request("POST", PATH, data=sale, content_type="application/json", REMOTE_ADDR=ip)
    return response.status_code, response.json()


def test_the_first_sale_creates_a_test_merchant_that_needs_no_key(api, sale):
    status, _ = _post(api, {**sale, "merchant_string_id": "test-kiosk", "merchant_name": "Kiosk"})
    assert status == 200
    merchant = Merchant.objects.get(string_id="test-kiosk")
    assert (merchant.name, merchant.is_test, merchant.require_api_key) == ("Kiosk", True, False)


def test_a_refused_sale_leaves_no_merchant_behind(api, sale, receipt_factory):
    # The hostile review: 50 conflicting creates left 50 orphan test- merchants.
    receipt_factory()  # holds the sale's token
    for n in range(5):
        status, body = _post(api, {**sale, "merchant_string_id": f"test-orphan-{n}", "total_amount": 7})
        assert status == 409
        assert body == error_envelope(409, "CONFLICT", "Token already used for a different receipt", PATH)
    assert not Merchant.objects.filter(string_id__startswith="test-orphan-").exists()
    assert Receipt.objects.count() == 1


def test_new_test_merchants_are_limited_per_address(api, sale, settings):
    settings.RECECO_RATELIMIT_TEST_MERCHANTS = "2/h"
    statuses = [
        _post(api, {**sale, "token": f"rcpt_testmerch_{n:06d}", "merchant_string_id": f"test-m{n}"})[0]
        for n in range(3)
    ]
    assert statuses == [200, 200, 429]
    status, body = _post(api, {**sale, "token": "rcpt_testmerch_000009", "merchant_string_id": "test-m9"})
    assert status == 429
    assert body == error_envelope(
        429,
        "TOO_MANY_REQUESTS",
        "Too many new test merchants: at most 2 per hour from one address; "
        "use a test- merchant id you have used before",
        PATH,
    )
    assert Merchant.objects.filter(string_id__startswith="test-m").count() == 2
    # Known test merchants, and other addresses, go on.
    assert _post(api, {**sale, "token": "rcpt_testmerch_000010", "merchant_string_id": "test-m0"})[0] == 200
    assert (
        _post(api, {**sale, "token": "rcpt_testmerch_000011", "merchant_string_id": "test-x"}, "198.51.100.1")[0] == 200
    )
