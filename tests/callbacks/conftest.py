import pytest

from messaging.models import SMS, Delivery
from tests.provider_doubles import settings_for

PHONE = "+2348031234567"


@pytest.fixture
def configured(settings):
    """Every provider's credentials set, as the doubles' accounts have them."""
    for provider in ("africastalking", "twilio", "termii", "whatsapp"):
        for name, value in settings_for(provider).items():
            setattr(settings, name, value)
    settings.RECECO_SMS_BACKEND = "locmem"
    return settings


@pytest.fixture
def sent_delivery(receipt):
    """A receipt's text, recorded sent by a provider with its id for it."""

    def make(provider: str, message_id: str, channel: str = SMS) -> Delivery:
        return Delivery.objects.create(
            channel=channel,
            merchant_id=receipt.merchant_id,
            receipt=receipt,
            destination=PHONE,
            status=Delivery.Status.SENT,
            provider=provider,
            provider_message_id=message_id,
            parts=1,
        )

    return make
