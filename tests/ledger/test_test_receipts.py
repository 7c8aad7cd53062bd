"""Test receipts never enter the live log and are never signed with its key (ledger.appender):
anyone may make one, for a ``test-`` merchant, under any shop name. The third hostile
review had a ``test-`` merchant, anonymously, get "Shoprite Lekki (Official)" signed with
the production key and appended to the public log, and /app/verify call it genuine.

Entries the log took before this rule stay in it and stay verifiable, as test receipts."""

import functools
import json

import pytest
from django.db.models import F
from receco_verify.cli import main as receco_verify

from ledger import appender, audit, entries, standing
from ledger.models import Leaf
from receipts import refunds
from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.signing import ContentRow
from receipts.validation import validate_sale
from tests.helpers import bearer
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db

FORGERY = {
    "merchant_string_id": "test-anything",
    "merchant_name": "Shoprite Lekki (Official)",
    "total_amount": 1300000,
    "items": [{"name": "Television", "quantity": 1, "unit_price": 1300000, "total_price": 1300000}],
}
NEVER_LOGGED = "A test receipt is never signed nor logged: it records no purchase"


@pytest.fixture
def forgery(api):
    status, body = api.post("createReceiptFromPOS", FORGERY)
    assert status == 200, body
    return Receipt.objects.get(pk=body["result"]["data"]["id"])


def _verify(client, tmp_path, document) -> int:
    (tmp_path / "receipt.orf.json").write_text(json.dumps(document))
    (tmp_path / "jwks.json").write_bytes(client.get("/.well-known/jwks.json").content)
    return receco_verify([str(tmp_path / "receipt.orf.json"), "--keys", str(tmp_path / "jwks.json")])


def test_a_test_merchants_receipt_is_never_signed_nor_logged(client, api, forgery, receipt, tmp_path, capsys):
    result = append()
    assert (result.count, list(Leaf.objects.values_list("receipt_id", flat=True))) == (1, [receipt.pk])
    document = client.get(f"/app/receipt/{forgery.token}/receipt.orf.json").json()
    assert "trust" not in document
    assert "signed_content" not in document["extensions"]["receco"]
    assert document["extensions"]["receco"]["livemode"] is False
    assert _verify(client, tmp_path, document) == 1
    assert capsys.readouterr().err == (
        "NOT VERIFIED: a test receipt: made with a test key or for a test merchant, by anyone, under any name; "
        "no purchase. Receco does not sign test receipts\n"
    )
    assert client.get(f"/log/proof/{forgery.token}").json() == {"error": {"code": "NOT_FOUND", "message": NEVER_LOGGED}}
    status, body = api.get("getReceiptProof", {"token": forgery.token})
    assert (status, body["error"]["message"], body["error"]["data"]["code"]) == (404, NEVER_LOGGED, "NOT_FOUND")


def test_nor_is_a_test_keys_receipt_its_refund_or_its_void(api, merchant, test_key, sale, receipt):
    status, body = api.post("createReceiptFromPOS", {**sale, "token": "rcpt_testkey01_aaaa"}, **bearer(test_key))
    made = body["result"]["data"]
    api.post("refundReceipt", {"token": made["token"], "amount": 1000}, **bearer(test_key))
    other = api.post("createReceiptFromPOS", {**sale, "token": "rcpt_testkey02_aaaa"}, **bearer(test_key))[1]
    api.post("voidReceipt", {"token": other["result"]["data"]["token"]}, **bearer(test_key))
    assert Receipt.objects.filter(livemode=False).count() == 3
    append()
    assert list(Leaf.objects.values_list("receipt_id", "kind")) == [(receipt.pk, "receipt")]


def test_verifylog_does_not_miss_them_and_the_page_says_what_they_are(client, forgery, receipt, settings):
    settings.RECECO_LOG_COMMIT_LAG = -3600  # as if everything were long committed
    append()
    assert audit.audit().problems == []
    assert standing.standing(forgery) == standing.Standing(standing.TEST, merchant_id="test-anything", test=True)
    page = client.get(f"/app/receipt/{forgery.token}").content.decode()
    assert '<h2 id="log-title">Test receipt: not signed</h2>' in page
    assert "Receco does not sign them or keep them in its public log: this one records no purchase." in page
    assert "Verified" not in page


def test_a_live_sale_sets_a_test_receipt_aside_and_only_the_live_one_is_logged(api, forgery, merchant):
    sale = {**FORGERY, "merchant_string_id": merchant.string_id, "token": forgery.token}
    assert api.post("createReceiptFromPOS", {**sale, "short_code": forgery.short_code})[0] == 200
    append()
    (leaf,) = Leaf.objects.all()
    assert (leaf.receipt.merchant, leaf.receipt.token, leaf.kind) == (merchant, forgery.token, "receipt")


def _append_as_before(monkeypatch, *receipts):
    """Append ``receipts`` as the appender did before test receipts were left out: in the
    content of that time (version 2)."""
    rows = Receipt.objects.annotate(
        merchant_string_id=F("merchant__string_id"),
        checked_legal_name=F("merchant__checked_legal_name"),
        checked_registration_number=F("merchant__checked_registration_number"),
    ).values_list(*ContentRow._fields)
    found = [ContentRow._make(rows.get(pk=receipt.pk)) for receipt in receipts]
    with monkeypatch.context() as patched:
        patched.setattr(appender, "_receipts", lambda *args: found)
        patched.setattr(entries, "receipt_entry", functools.partial(entries.receipt_entry, version=2))
        append()


def test_a_test_receipt_logged_before_stays_verifiable_as_a_test_receipt(
    client, forgery, tmp_path, capsys, monkeypatch
):
    _append_as_before(monkeypatch, forgery)
    assert Leaf.objects.get().receipt_id == forgery.pk
    document = client.get(f"/app/receipt/{forgery.token}/receipt.orf.json").json()
    assert document["extensions"]["receco"]["signed_content"]["livemode"] is False
    assert _verify(client, tmp_path, document) == 3
    out, err = capsys.readouterr()
    assert f"VERIFIED TEST receipt {forgery.short_code} ({forgery.token})" in out
    assert "  merchant: test-anything, identity not stated (signed in version 2);" in out
    assert err.startswith("NOT A PURCHASE: a test receipt")
    found = standing.standing(forgery)
    assert (found.state, found.test) == (standing.VERIFIED, True)
    page = client.get(f"/app/receipt/{forgery.token}").content.decode()
    assert '<h2 id="log-title">Verified test receipt</h2>' in page
    assert "It is a test receipt, signed before Receco stopped signing them: it records no purchase." in page
    assert audit.audit().problems == []
    refunds.void(forgery, "", keyed=False)
    append()  # its void is not logged: a test receipt's
    assert Leaf.objects.count() == 1


def test_create_receipt_marks_a_test_merchants_sale_as_test_whatever_the_caller_says(merchant, sale):
    # What decides it is the merchant's flag and the key's type (receipts.creation).
    from merchants.models import Merchant

    sandbox = Merchant.objects.create(string_id="sandbox", name="Sandbox", is_test=True)
    made = create_receipt(sandbox, validate_sale({**sale, "merchant_string_id": "sandbox"}), livemode=True)
    assert made.receipt.livemode is False
    append()
    assert not Leaf.objects.exists()
