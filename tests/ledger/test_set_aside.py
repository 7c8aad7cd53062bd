"""A receipt set aside (a keyed sale took back the token a receipt made without the key
held: receipts.creation) is an entry of its own in the log, never an edit: its first
entry keeps the token and short code it was issued with, the set aside names both."""

import pytest
from receco_verify import keys as jwks_format
from receco_verify.receipt import verify_bundle

from ledger import audit
from ledger.models import Leaf
from receipts.models import Receipt, SetAside
from tests.ledger.conftest import append

TOKEN, CODE = "rcpt_claimed00_aaaaa", "CLAIM1"


@pytest.fixture
def forgery(receipt_factory):
    """A receipt made without the merchant's key, holding the token its POS will send."""
    return receipt_factory(keyed=False, token=TOKEN, short_code=CODE, total_amount=1)


def _take_back(receipt_factory) -> tuple[Receipt, Receipt]:
    genuine = receipt_factory(keyed=True, token=TOKEN, short_code=CODE)
    aside = SetAside.objects.get()
    return genuine, aside.receipt


def _published(client) -> dict:
    return jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())


def test_a_receipt_set_aside_after_it_was_logged_is_an_entry_not_an_edit(forgery, receipt_factory, client):
    append()
    genuine, moved = _take_back(receipt_factory)
    assert moved.pk == forgery.pk
    assert moved.token != TOKEN
    append()
    assert audit.audit().problems == []
    assert list(Leaf.objects.order_by("index").values_list("kind", "receipt_id")) == [
        ("receipt", forgery.pk),
        ("receipt", genuine.pk),
        ("set_aside", forgery.pk),
    ]
    first = client.get(f"/log/proof/{moved.token}").json()
    assert (first["content"]["token"], first["content"]["total_amount"]) == (TOKEN, 1)  # as it was issued
    aside = client.get(f"/log/proof/{moved.token}", {"entry": "set_aside"}).json()
    assert aside["content"]["type"] == "set_aside"
    assert aside["content"]["was"] == {"token": TOKEN, "short_code": CODE}
    assert (aside["content"]["token"], aside["content"]["short_code"]) == (moved.token, moved.short_code)
    assert aside["content"]["number"] == first["content"]["number"] == moved.receipt_number  # kept when set aside
    taken = client.get(f"/log/proof/{TOKEN}").json()
    assert (taken["content"]["token"], taken["content"]["total_amount"]) == (TOKEN, 130000)
    for bundle in (first, aside, taken):
        verify_bundle(bundle, _published(client))


def test_a_receipt_set_aside_before_it_was_logged_is_logged_as_issued(forgery, receipt_factory):
    _, moved = _take_back(receipt_factory)
    append()
    assert audit.audit().problems == []
    kinds = list(Leaf.objects.order_by("index").values_list("kind", "receipt_id"))
    assert kinds == [("receipt", forgery.pk), ("receipt", kinds[1][1]), ("set_aside", moved.pk)]


def test_a_set_aside_receipts_token_changed_behind_the_services_back_is_caught(forgery, receipt_factory):
    append()
    _, moved = _take_back(receipt_factory)
    append()
    Receipt.objects.filter(id=moved.id).update(token="rcpt_rewritten_aaaaa")
    assert audit.audit().problems == [
        f"entry 2 (set aside {moved.short_code}, rcpt_rewritten_aaaaa): edited after it was signed "
        "(its content no longer matches its signature)"
    ]


def test_a_set_aside_record_deleted_is_caught(forgery, receipt_factory):
    append()
    _, moved = _take_back(receipt_factory)
    append()
    aside = SetAside.objects.get()
    SetAside.objects.filter(id=aside.id).delete()
    problems = audit.audit().problems
    assert f"entry 2 (set aside {moved.short_code}, {moved.token}): set aside {aside.id} is missing from the " \
        "database (deleted)" in problems  # fmt: skip
    # and the receipt's own entry no longer knows the token it was issued with
    assert any(problem.startswith("entry 0 (receipt") and "edited after it was signed" in problem
               for problem in problems)  # fmt: skip
