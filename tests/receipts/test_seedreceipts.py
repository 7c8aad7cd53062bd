import pytest
from django.core.management import CommandError, call_command

from receipts.codes import SHORT_CODE_RE, TOKEN_RE
from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def test_it_creates_realistic_readable_receipts(merchant, api, capsys):
    call_command("seedreceipts", merchant.string_id, "250", "--batch-size", "100")
    receipts = list(Receipt.objects.all())
    assert len(receipts) == 250
    assert len({r.short_code for r in receipts}) == 250
    for receipt in receipts:
        assert TOKEN_RE.match(receipt.token)
        assert SHORT_CODE_RE.match(receipt.short_code)
        assert receipt.total_amount == sum(item["total_price"] for item in receipt.items)
    status, body = api.get("getReceipt", {"token": receipts[0].short_code})
    assert status == 200
    assert body["result"]["data"]["merchant_name"] == "Mama Put Kitchen"
    assert "Created 250 receipts for mama-put" in capsys.readouterr().out


def test_it_adds_to_existing_receipts(merchant):
    call_command("seedreceipts", merchant.string_id, "20")
    call_command("seedreceipts", merchant.string_id, "20")
    assert Receipt.objects.count() == 40


def test_it_refuses_an_unknown_merchant():
    with pytest.raises(CommandError, match="No merchant 'ghost': create it with createmerchant first"):
        call_command("seedreceipts", "ghost", "10")
