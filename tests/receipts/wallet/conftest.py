import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.receipts.wallet.support import apple_chain, configure_apple, configure_google


@pytest.fixture(scope="session")
def chain(tmp_path_factory):
    """An Apple-like certificate chain of this run's own, its files in a folder."""
    return apple_chain(tmp_path_factory.mktemp("apple-wallet"))


@pytest.fixture(scope="session")
def google_key():
    """The private key of this run's Google service account."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def apple_on(settings, chain):
    configure_apple(settings, chain)
    return chain


@pytest.fixture
def google_on(settings, google_key):
    configure_google(settings, google_key)
    return google_key
