"""What a merchant's receipts cost to send (dashboard.usage), per UTC day."""

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.usage import DayCost, daily_costs
from messaging.models import EMAIL, SMS, WHATSAPP, Delivery

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _sent(receipt, channel: str, parts: int, at: datetime, merchant_id=None):
    Delivery.objects.create(
        channel=channel,
        merchant_id=merchant_id or receipt.merchant_id,
        receipt=receipt,
        destination="+2348031234567",
        status=Delivery.Status.SENT,
        parts=parts,
        sent_at=at,
    )


def test_sms_parts_and_whatsapp_messages_are_counted_per_utc_day(receipt, other_merchant):
    _sent(receipt, SMS, 2, NOW)
    _sent(receipt, SMS, 1, NOW - timedelta(hours=11, minutes=59))  # 00:01 UTC, the same day
    _sent(receipt, WHATSAPP, 1, NOW)
    _sent(receipt, SMS, 1, NOW - timedelta(days=1))
    _sent(receipt, EMAIL, 0, NOW)  # email costs nothing here
    _sent(receipt, SMS, 5, NOW, merchant_id=other_merchant.pk)  # another shop's
    _sent(receipt, SMS, 7, NOW - timedelta(days=3))  # before the period
    assert daily_costs(receipt.merchant_id, days=2, now=NOW) == [
        DayCost(NOW.date() - timedelta(days=1), 1, 0),
        DayCost(NOW.date(), 3, 1),
    ]
