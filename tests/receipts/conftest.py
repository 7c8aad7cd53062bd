import pytest

from receipts import sms


@pytest.fixture(autouse=True)
def _fresh_sms_outbox(settings):
    """Texts go to a module list, like mail.outbox: each test starts with it empty.
    (Rate-limit counters are cleared for every test by tests/conftest.py.)"""
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
    return create_receipt(merchant, data, livemode=False).receipt
