import pytest

from webhooks.endpoints import create_endpoint


@pytest.fixture(autouse=True)
def _local_receivers(local_receivers):
    """Every test here may send to receivers on 127.0.0.1 over http."""


@pytest.fixture
def endpoint(merchant, receiver):
    """An endpoint of ``merchant`` for every event type, at ``receiver``."""
    return create_endpoint(merchant, receiver.url, description="Accounting")
