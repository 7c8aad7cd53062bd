"""What the verify page calls verified is the identity Receco's operator checked (legal
name, RC/BN number), signed into each receipt logged since (content version 3), never the
shop name on a receipt, which an owner may change at will: the third hostile review saw
/app/verify call "Shoprite Lekki (Official)" genuine because a receipt said so.

The owner's changes and the operator's check are both in the audit trail."""

import json

import pytest
from receco_verify.cli import main as receco_verify

from ledger import audit, standing
from merchants.models import AuditEntry
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db

IP = "203.0.113.7"


def _form(client, merchant) -> dict:
    page = client.get(f"/admin/merchants/merchant/{merchant.pk}/change/")
    return {k: v for k, v in page.context["adminform"].form.initial.items() if v is not None}


def _save(client, merchant, **changes) -> None:
    form = {**_form(client, merchant), **changes}
    response = client.post(f"/admin/merchants/merchant/{merchant.pk}/change/", form, REMOTE_ADDR=IP)
    assert response.status_code == 302, response.content.decode()[:2000]
    merchant.refresh_from_db()


def _verify(client, tmp_path, receipt) -> int:
    (tmp_path / "receipt.orf.json").write_bytes(client.get(f"/app/receipt/{receipt.token}/receipt.orf.json").content)
    (tmp_path / "jwks.json").write_bytes(client.get("/.well-known/jwks.json").content)
    return receco_verify([str(tmp_path / "receipt.orf.json"), "--keys", str(tmp_path / "jwks.json")])


def test_the_operators_check_is_signed_into_every_receipt_logged_since(
    client, superuser, merchant, receipt_factory, tmp_path, capsys
):
    before = receipt_factory(token="rcpt_beforecheck_aaa", short_code="BEFORE")
    append()
    client.force_login(superuser)
    AuditEntry.objects.all().delete()
    _save(client, merchant, checked_legal_name="Mama Put Foods Ltd", checked_registration_number="rc 1234567")
    assert (merchant.checked_legal_name, merchant.checked_registration_number) == ("Mama Put Foods Ltd", "RC1234567")
    (entry,) = AuditEntry.objects.filter(merchant=merchant)
    assert (entry.actor, entry.changes_dict["checked_legal_name"]) == (superuser, ["", "Mama Put Foods Ltd"])
    assert entry.changes_dict["checked_registration_number"] == ["", "RC1234567"]

    after = receipt_factory(token="rcpt_aftercheck_aaaa", short_code="AFTER1")
    append()
    assert _verify(client, tmp_path, after) == 0
    out = capsys.readouterr().out
    assert "  merchant: mama-put, identity checked by Receco: Mama Put Foods Ltd, RC1234567\n" in out
    page = client.get(f"/app/receipt/{after.token}").content.decode()
    assert (
        '<p class="checked-identity">Identity checked by Receco: <strong>Mama Put Foods Ltd</strong>, RC1234567.</p>'
        in page
    )
    assert 'merchant <span class="code merchant-id">mama-put</span>' in page

    # Logged before the check, a receipt states none, and keeps stating none.
    assert _verify(client, tmp_path, before) == 0
    assert "  merchant: mama-put, identity not checked by Receco;" in capsys.readouterr().out
    found = standing.standing(before)
    assert (found.state, found.identified, found.identity) == (standing.VERIFIED, True, None)
    assert (
        "Receco has not checked who runs this merchant" in client.get(f"/app/receipt/{before.token}").content.decode()
    )
    assert audit.audit().problems == []


def test_an_owner_renames_the_shop_on_later_receipts_but_cannot_touch_the_check(
    client, owner, merchant, receipt_factory, tmp_path, capsys
):
    merchant.checked_legal_name, merchant.checked_registration_number = "Mama Put Foods Ltd", "RC1234567"
    merchant.require_api_key = True
    merchant.save()
    client.force_login(owner)
    AuditEntry.objects.all().delete()
    _save(
        client,
        merchant,
        name="Shoprite Lekki (Official)",
        checked_legal_name="Shoprite Nigeria Ltd",
        checked_registration_number="RC7654321",
    )
    assert merchant.name == "Shoprite Lekki (Official)"
    assert (merchant.checked_legal_name, merchant.checked_registration_number) == ("Mama Put Foods Ltd", "RC1234567")
    (entry,) = AuditEntry.objects.filter(merchant=merchant)
    assert entry.actor == owner
    assert entry.changes_dict == {"name": ["Mama Put Kitchen", "Shoprite Lekki (Official)"]}

    renamed = receipt_factory(token="rcpt_renamed001_aaaa", short_code="RENAM1")
    append()
    assert renamed.merchant_name == "Shoprite Lekki (Official)"
    assert _verify(client, tmp_path, renamed) == 0
    assert (
        "  merchant: mama-put, identity checked by Receco: Mama Put Foods Ltd, RC1234567\n" in capsys.readouterr().out
    )


def test_a_check_the_operator_withdraws_is_signed_by_no_later_receipt(client, superuser, merchant, receipt_factory):
    merchant.checked_legal_name = "Mama Put Foods Ltd"
    merchant.save()
    first = receipt_factory(token="rcpt_withdraw01_aaaa", short_code="WITHD1")
    append()
    client.force_login(superuser)
    _save(client, merchant, checked_legal_name="", checked_registration_number="")
    second = receipt_factory(token="rcpt_withdraw02_aaaa", short_code="WITHD2")
    append()
    bundles = [client.get(f"/log/proof/{receipt.token}").json()["content"] for receipt in (first, second)]
    identities = [content["merchant"]["identity"] for content in bundles]
    assert identities == [{"legal_name": "Mama Put Foods Ltd", "registration_number": None}, None]
    assert audit.audit().problems == []  # each entry keeps what it signed


def test_the_dashboard_tells_an_owner_who_may_set_the_check(client, owner, merchant):
    client.force_login(owner)
    page = client.get(f"/admin/merchants/merchant/{merchant.pk}/change/").content.decode()
    assert "Identity checked by Receco" in page
    assert "Only Receco's operator sets these, after checking the company registry." in page
    assert 'name="checked_legal_name"' not in page  # read-only for an owner


def test_a_verify_page_knows_the_exponent_of_each_currency(client):
    published = client.get("/app/verify").context["published"]
    assert published["currencies"]["digits"]["JPY"] == 0
    assert (published["currencies"]["digits"]["NGN"], published["currencies"]["default"]) == (2, 2)
    assert json.dumps(published)  # a data block the page reads
