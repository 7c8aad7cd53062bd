from pathlib import Path

import pytest
from django.core.management import call_command

from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def test_it_creates_the_demo_once_and_prints_a_working_example(capsys, api):
    call_command("seeddemo")
    call_command("seeddemo")
    receipt = Receipt.objects.get()
    assert receipt.short_code == "DEMO42"
    out = capsys.readouterr().out
    assert "https://receipts.example.test/api/trpc/getReceipt?input=%7B%22token%22%3A%22DEMO42%22%7D" in out
    status, _ = api.get("getReceipt", {"token": "DEMO42"})
    assert status == 200


def test_it_keeps_a_demo_receipt_made_by_an_older_version(capsys):
    call_command("seeddemo")
    Receipt.objects.update(total_amount=1, fingerprint="0" * 64)
    call_command("seeddemo")
    assert Receipt.objects.get().total_amount == 1
    assert "short code DEMO42" in capsys.readouterr().out


def test_it_names_the_readmes_way_to_make_a_dashboard_user(capsys):
    # One way, in both: the README's example makes an owner of demo-shop.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "./dev manage createmerchantuser demo-shop ada --password 'a long passphrase' --owner" in readme
    call_command("seeddemo")
    out = capsys.readouterr().out
    assert "./dev manage createmerchantuser demo-shop <name> --password '<a long passphrase>' --owner" in out
    assert "createsuperuser" not in out
