"""Contact data is shown in full only to the owning merchant's key (docs/api.md, "getReceipt")."""

import pytest

from tests.helpers import bearer

pytestmark = pytest.mark.django_db

FULL = {"customer_email": "customer@example.com", "customer_phone": "+2348031234589"}
MASKED = {"customer_email": "c*******@example.com", "customer_phone": "+234*******89"}


@pytest.fixture
def receipt(receipt_factory):
    return receipt_factory(customer_email=FULL["customer_email"], customer_phone="08031234589")


def _contact(api, receipt, **headers) -> dict:
    status, body = api.get("getReceipt", {"token": receipt.short_code}, **headers)
    assert status == 200, body
    data = body["result"]["data"]
    return {"customer_email": data["customer_email"], "customer_phone": data["customer_phone"]}


def test_anonymous_readers_see_it_masked(api, receipt):
    assert _contact(api, receipt) == MASKED


def test_an_empty_bearer_sees_it_masked(api, receipt):
    assert _contact(api, receipt, Authorization="Bearer ") == MASKED


def test_the_owning_merchants_live_key_sees_it_in_full(api, receipt, live_key):
    assert _contact(api, receipt, **bearer(live_key)) == FULL


def test_the_owning_merchants_test_key_sees_test_receipts_in_full(api, receipt, test_key):
    receipt.livemode = False
    receipt.save()
    assert _contact(api, receipt, **bearer(test_key)) == FULL


def test_another_merchants_key_sees_nothing(api, receipt, other_live_key):
    status, body = api.get("getReceipt", {"token": receipt.short_code}, **bearer(other_live_key))
    assert status == 404
    assert "customer" not in str(body)
