import base64
import secrets

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from einvoicing.models import EInvoicing
from tests.einvoicing.nrs import NRSDouble, Taxpayer

SERVICE_ID = "94ND90NR"
BUSINESS_ID = "800a1faf-4b81-4b6e-bbe0-cfeb6ca31d4a"
# The short certificate string of crypto_keys.txt, as NRS's guide shows one.
CERTIFICATE = base64.b64encode(b"UXkjE5VTt5tyBfaeuFf0QrQ4HSuyaqMi8flX").decode()


@pytest.fixture(scope="session")
def nrs_private_key():
    """NRS's key pair of the taxpayer's crypto_keys.txt: its public half is in the file,
    its private half only NRS (here: the test) holds, to read the QR code."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="session")
def crypto_keys(nrs_private_key) -> str:
    """A crypto_keys.txt as NRS's guide shows it: the public key, then the certificate."""
    pem = nrs_private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode() + CERTIFICATE + "\n"


@pytest.fixture
def taxpayer() -> Taxpayer:
    return Taxpayer(
        api_key=f"key-{secrets.token_hex(8)}",
        api_secret=secrets.token_urlsafe(48),
        business_id=BUSINESS_ID,
        service_id=SERVICE_ID,
    )


@pytest.fixture
def nrs(taxpayer, settings):
    """The double of NRS on 127.0.0.1, where the service reports (RECECO_EINVOICING_URL)."""
    double = NRSDouble(taxpayer)
    settings.RECECO_EINVOICING_URL = double.url
    yield double
    double.close()


@pytest.fixture
def identified(merchant):
    """``merchant`` with the legal identity an invoice states."""
    merchant.legal_name = "Mama Put Foods Ltd"
    merchant.address = "12 Admiralty Way\nLekki Phase 1"
    merchant.phone = "0803 123 4567"
    merchant.support_email = "hello@mamaput.example"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "29445920-4211"
    merchant.save()
    return merchant


@pytest.fixture
def reporting(identified, taxpayer, crypto_keys) -> EInvoicing:
    """E-invoicing switched on for ``merchant``, with the taxpayer's credentials."""
    setup = EInvoicing(
        merchant=identified,
        enabled=True,
        business_id=taxpayer.business_id,
        service_id=taxpayer.service_id,
        city="Lagos",
        postal_zone="106104",
    )
    setup.set_credentials(api_key=taxpayer.api_key, api_secret=taxpayer.api_secret, crypto_keys=crypto_keys)
    setup.full_clean()
    setup.save()
    return setup
