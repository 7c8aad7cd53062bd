"""The appender (ledger.appender): receipts and voids enter the log in the order they were
written, once committed, each signed, with the tree's nodes and a signed checkpoint."""

from datetime import timedelta

import pytest
from django.utils import timezone
from receco_verify import merkle, note

from ledger import tree
from ledger.appender import SigningOff, append_batch
from ledger.models import Checkpoint, Head, Leaf
from receco.lib import signingkeys
from receipts import refunds
from receipts.models import Receipt
from receipts.signing import receipt_content
from tests.ledger.conftest import append


def _sales(receipt_factory, count, start=0):
    return [receipt_factory(token=f"rcpt_ledger{i:02d}_aaaaaa", short_code=f"LEDG{i:02d}") for i in range(start, count)]


def test_receipts_enter_the_log_in_the_order_they_were_written_each_signed(receipt_factory, keys):
    sales = _sales(receipt_factory, 5)
    result = append()
    assert (result.count, result.size) == (5, 5)
    leaves = list(Leaf.objects.order_by("index"))
    assert [leaf.receipt_id for leaf in leaves] == [sale.id for sale in sales]
    for leaf, sale in zip(leaves, sales, strict=True):
        signed = receipt_content(sale, "mama-put", keys.kid)
        from receco_verify.canonical import canonicalize

        assert bytes(leaf.leaf_hash) == merkle.leaf_hash(canonicalize(signed))
        assert keys.public[leaf.kid].verify(bytes(leaf.signature), canonicalize(signed))
    assert tree.root(5) == merkle.root_of([bytes(leaf.leaf_hash) for leaf in leaves])


def test_each_checkpoint_is_signed_and_names_the_root(receipt_factory, keys, settings):
    _sales(receipt_factory, 3)
    checkpoint = append().checkpoint
    verified = note.verify_checkpoint(checkpoint.note, keys.public.values(), origin=settings.RECECO_LOG_ORIGIN)
    assert (verified.size, verified.root) == (3, tree.root(3))
    assert settings.RECECO_LOG_ORIGIN == "receipts.example.test/receipts"


def test_appending_again_adds_only_what_is_new_and_every_older_root_is_kept(receipt_factory):
    _sales(receipt_factory, 3)
    first = append()
    _sales(receipt_factory, 7, start=3)
    second = append()
    assert (first.size, second.count, second.size) == (3, 4, 7)
    assert append().count == 0
    roots = {c.size: bytes(c.root) for c in Checkpoint.objects.all()}
    assert roots == {3: tree.root(3), 7: tree.root(7)}
    merkle.verify_consistency(3, 7, tree.consistency_proof(3, 7), roots[3], roots[7])


def test_batches_split_a_backlog_and_agree_with_one_big_batch(receipt_factory):
    _sales(receipt_factory, 11)
    sizes = [append(limit=4, checkpoint=False).size for _ in range(3)]
    assert sizes == [4, 8, 11]
    leaves = [bytes(h) for h in Leaf.objects.order_by("index").values_list("leaf_hash", flat=True)]
    assert tree.root(11) == merkle.root_of(leaves)
    for index in range(11):
        merkle.verify_inclusion(leaves[index], index, 11, tree.inclusion_proof(index, 11), tree.root(11))


def test_a_receipt_younger_than_the_commit_lag_waits(receipt_factory, settings):
    _sales(receipt_factory, 2)
    assert append_batch(now=timezone.now()).count == 0  # written just now: perhaps not all committed
    later = timezone.now() + timedelta(seconds=settings.RECECO_LOG_COMMIT_LAG + 1)
    assert append_batch(now=later).count == 2


def test_a_receipt_that_committed_after_a_later_one_is_still_appended(receipt_factory):
    first, second = _sales(receipt_factory, 2)
    # As if the first sale's transaction had committed only after the appender passed it.
    Receipt.objects.filter(id=first.id).update(created_at=timezone.now() + timedelta(minutes=5))
    assert append().count == 1
    assert Head.objects.get().receipt_cursor == second.id
    Receipt.objects.filter(id=first.id).update(created_at=timezone.now())
    assert append().count == 1
    assert list(Leaf.objects.order_by("index").values_list("receipt_id", flat=True)) == [second.id, first.id]


def test_refunds_and_voids_are_entries_of_their_own_after_their_sale(receipt_factory):
    sale, other = _sales(receipt_factory, 2)
    body = {"token": sale.token, "refund_token": "rcpt_refund01_aaaaaa", "amount": 1000}
    refund = refunds.refund(sale, refunds.validate_refund(body), keyed=True).receipt
    void = refunds.void(other, "Rung up twice", keyed=True)
    append()
    entries = list(Leaf.objects.order_by("index").values_list("kind", "receipt_id", "void_id"))
    assert entries == [("receipt", sale.id, None), ("receipt", other.id, None), ("receipt", refund.id, None),
                       ("void", other.id, void.id)]  # fmt: skip


def test_nothing_is_appended_twice(receipt_factory):
    _sales(receipt_factory, 3)
    append()
    Head.objects.update(receipt_cursor=0)  # a cursor lost: the sweep must not re-append
    assert append().count == 0
    assert Leaf.objects.count() == 3


def test_without_a_key_nothing_is_appended(receipt_factory, settings):
    _sales(receipt_factory, 1)
    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        with pytest.raises(SigningOff, match="off: no signing key configured"):
            append()
    finally:
        signingkeys.keyring.cache_clear()
    assert Leaf.objects.count() == 0


def test_a_rotated_key_signs_new_entries_and_old_ones_keep_theirs(receipt_factory, keys, other_keys):
    assert other_keys.kid != keys.kid
    assert keys.kid in other_keys.public
    _sales(receipt_factory, 2)
    append()
    assert set(Leaf.objects.values_list("kid", flat=True)) == {other_keys.kid}
