import pytest
from django.core.cache import cache

from receipts import sms


@pytest.fixture(autouse=True)
def _fresh_counters_and_outboxes(settings):
    """Rate-limit counters live in the cache and SMS in a module list: each test starts clean."""
    cache.clear()
    sms.outbox.clear()
    settings.RECECO_SMS_BACKEND = "locmem"


@pytest.fixture
def receipt(receipt_factory):
    return receipt_factory()


@pytest.fixture
def test_receipt(merchant, sale):
    """A test receipt (made with a test key or for a test- merchant): livemode False."""
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    data = validate_sale({**sale, "token": "rcpt_testmode_000001", "short_code": "TSTTST"})
    return create_receipt(merchant, data, livemode=False)[0]
