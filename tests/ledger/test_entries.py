"""Each entry of the log is rebuilt in the version of the content it was signed in
(ledger.entries): entries appended now sign the receipt's number (from version 2) and the
merchant's checked identity (version 3) and verify offline with them; entries signed in
version 1, before there was a number to sign, and in version 2, before identities, still
verify as they were signed."""

import functools

import pytest
from receco_verify import keys as jwks_format
from receco_verify.cli import main as receco_verify
from receco_verify.receipt import VerificationError, verify_bundle

from ledger import audit, entries, standing
from ledger.models import Leaf
from receipts import refunds
from receipts.models import Receipt
from tests.ledger.conftest import append

ORIGIN = "receipts.example.test/receipts"


@pytest.fixture
def sale(receipt_factory):
    return receipt_factory(token="rcpt_numbered01_aaaa", short_code="NUMB01")


def _published(client) -> dict:
    return jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())


def _append_as_version(monkeypatch, version: int):
    """Append what is waiting as the appender did when ``version`` was the current one."""
    with monkeypatch.context() as patched:
        for name in ("receipt_entry", "void_entry", "set_aside_entry"):
            patched.setattr(entries, name, functools.partial(getattr(entries, name), version=version))
        append()


def _append_as_version_1(monkeypatch):
    """Append what is waiting as the appender did before version 2: every entry in version 1."""
    _append_as_version(monkeypatch, 1)


def test_a_sale_appended_now_signs_its_number_and_verifies_offline(sale, client, tmp_path, capsys):
    append()
    assert Leaf.objects.get(receipt=sale, kind=Leaf.Kind.RECEIPT).version == 3
    bundle = client.get(f"/log/proof/{sale.token}").json()
    assert (bundle["content"]["v"], bundle["content"]["number"]) == (3, sale.receipt_number)
    assert bundle["content"]["merchant"]["identity"] is None  # nobody checked Mama Put's identity
    assert sale.receipt_number.startswith("MAMAPU-")
    assert sale.receipt_number.endswith("-000001")
    verified = verify_bundle(bundle, _published(client), origin=ORIGIN)
    assert (verified.signed.version, verified.signed.number) == (3, sale.receipt_number)

    (tmp_path / "receipt.json").write_bytes(client.get(f"/log/proof/{sale.token}").content)
    (tmp_path / "jwks.json").write_bytes(client.get("/.well-known/jwks.json").content)
    assert receco_verify([str(tmp_path / "receipt.json"), "--keys", str(tmp_path / "jwks.json")]) == 0
    assert f"  number: {sale.receipt_number}, signed\n" in capsys.readouterr().out


def test_a_sale_whose_number_was_changed_after_signing_fails_verification(sale, client):
    append()
    Receipt.objects.filter(id=sale.id).update(number=sale.number + 1)
    bundle = client.get(f"/log/proof/{sale.token}").json()
    assert bundle["content"]["number"].endswith("-000002")
    with pytest.raises(VerificationError) as failed:
        verify_bundle(bundle, _published(client))
    assert str(failed.value) == "the signature does not match the receipt's content: it was changed after signing"
    assert standing.standing(Receipt.objects.get(id=sale.id)).state == standing.ALTERED


def test_a_void_and_a_refund_sign_the_numbers_of_their_receipts(sale, receipt_factory, client):
    other = receipt_factory(token="rcpt_numbered02_aaaa", short_code="NUMB02")
    body = refunds.validate_refund({"token": sale.token, "refund_token": "rcpt_numbrefund_aaaa", "amount": 1000})
    refund = refunds.refund(sale, body, keyed=True).receipt
    refunds.void(other, "Rung up twice", keyed=True)
    append()
    published = _published(client)
    voided = client.get(f"/log/proof/{other.token}", {"entry": "void"}).json()
    assert (voided["content"]["type"], voided["content"]["number"]) == ("void", other.receipt_number)
    assert verify_bundle(voided, published).signed.number == other.receipt_number
    refunded = client.get(f"/log/proof/{refund.token}").json()
    assert (refunded["content"]["type"], refunded["content"]["number"]) == ("refund", refund.receipt_number)
    assert verify_bundle(refunded, published).signed.number == refund.receipt_number


def test_an_entry_signed_in_version_1_still_verifies_beside_those_of_version_2(
    sale, receipt_factory, client, monkeypatch
):
    _append_as_version_1(monkeypatch)
    later = receipt_factory(token="rcpt_numbered03_aaaa", short_code="NUMB03")
    refunds.void(sale, "Rung up twice", keyed=True)
    append()
    versions = dict(Leaf.objects.values_list("index", "version"))
    assert versions == {0: 1, 1: 3, 2: 3}  # the sale in version 1; the later sale and the void in 3

    published = _published(client)
    old = client.get(f"/log/proof/{sale.token}").json()
    assert old["content"]["v"] == 1
    assert "number" not in old["content"]
    verified = verify_bundle(old, published, origin=ORIGIN)
    assert (verified.leaf_index, verified.signed.version, verified.signed.number) == (0, 1, None)
    assert verify_bundle(client.get(f"/log/proof/{later.token}").json(), published).signed.version == 3
    void = client.get(f"/log/proof/{sale.token}", {"entry": "void"}).json()
    assert verify_bundle(void, published).signed.number == sale.receipt_number
    assert audit.audit().problems == []
    assert standing.standing(sale).state == standing.VERIFIED


def test_version_1_never_signed_the_number_so_changing_it_breaks_only_version_2_entries(
    sale, receipt_factory, monkeypatch
):
    _append_as_version_1(monkeypatch)
    newer = receipt_factory(token="rcpt_numbered04_aaaa", short_code="NUMB04")
    append()
    Receipt.objects.filter(id__in=[sale.id, newer.id]).update(number_series="FORGED-2026")
    assert audit.audit().problems == [
        "entry 1 (receipt NUMB04, rcpt_numbered04_aaaa): edited after it was signed "
        "(its content no longer matches its signature)"
    ]


def test_an_entry_signed_in_version_2_still_verifies_without_an_identity(sale, merchant, client, monkeypatch):
    _append_as_version(monkeypatch, 2)
    merchant.checked_legal_name = "Mama Put Foods Ltd"
    merchant.save()
    bundle = client.get(f"/log/proof/{sale.token}").json()
    assert bundle["content"]["v"] == 2
    assert "identity" not in bundle["content"]["merchant"]  # version 2 states none, checked since or not
    verified = verify_bundle(bundle, _published(client), origin=ORIGIN)
    assert (verified.signed.version, verified.signed.identified) == (2, False)
    assert audit.audit().problems == []
    assert standing.standing(sale).state == standing.VERIFIED
