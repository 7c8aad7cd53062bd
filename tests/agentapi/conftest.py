import pytest


@pytest.fixture
def receipt(receipt_factory):
    """A stored receipt: the ``sale`` fixture as createReceiptFromPOS would record it."""
    return receipt_factory()
