"""verifylog catches each way of rewriting history: a receipt's amount, an item, a date or
its merchant changed, a row deleted, two entries re-ordered, a receipt left out, a
checkpoint the log no longer matches (a fork); and says nothing when nothing changed."""

import base64
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from ledger import audit
from ledger.models import Checkpoint, Leaf
from receipts import refunds
from receipts.models import Receipt, Void
from tests.ledger.conftest import append


@pytest.fixture
def logged(receipt_factory):
    sales = [receipt_factory(token=f"rcpt_audited{i:02d}_aaaaa", short_code=f"AUDI{i:02d}") for i in range(8)]
    refunds.void(sales[7], "Rung up twice", keyed=True)
    append()
    return sales


def _problems() -> list[str]:
    return audit.audit().problems


def test_an_untouched_log_has_no_problem_and_readyz_says_so(logged, client, capsys):
    assert _problems() == []
    call_command("verifylog")
    assert "OK 9 entries and 1 checkpoints checked: no problem" in capsys.readouterr().out
    detail = client.get("/readyz").json()["details"]["log"]
    assert detail.startswith("verified by verifylog at ")
    assert detail.endswith(": 9 entries, no problem")


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ("amount", {"total_amount": 129999}),
        ("item", {"items": [{"name": "Jollof rice", "quantity": 3, "unit_price": 50000, "total_price": 150000}]}),
        ("date", {"transaction_date": "2026-11-21T10:15:00Z"}),
        ("merchant name", {"merchant_name": "Another Kitchen"}),
        ("number", {"number": 999}),
        ("number's series", {"number_series": "MAMAPU-2025"}),
    ],
)
def test_an_edited_receipt_is_caught(logged, change, fields):
    Receipt.objects.filter(id=logged[3].id).update(**fields)
    assert _problems() == [
        "entry 3 (receipt AUDI03, rcpt_audited03_aaaaa): edited after it was signed "
        "(its content no longer matches its signature)"
    ]


def test_a_receipt_moved_to_another_merchant_is_caught(logged, other_merchant):
    Receipt.objects.filter(id=logged[5].id).update(merchant=other_merchant)
    assert _problems() == [
        "entry 5 (receipt AUDI05, rcpt_audited05_aaaaa): edited after it was signed "
        "(its content no longer matches its signature)"
    ]


def test_an_edited_void_is_caught(logged):
    Void.objects.filter(receipt=logged[7]).update(reason="Customer changed their mind")
    assert _problems() == [
        "entry 8 (void AUDI07, rcpt_audited07_aaaaa): edited after it was signed "
        "(its content no longer matches its signature)"
    ]


def test_an_erased_contact_breaks_nothing(logged):
    Receipt.objects.filter(id=logged[2].id).update(customer_email=None, customer_phone=None)
    assert _problems() == []


def test_a_deleted_receipt_is_caught(logged):
    with connection.cursor() as cursor:  # behind the service's back, past its protections
        cursor.execute("DELETE FROM messaging_delivery WHERE receipt_id = %s", [logged[4].id])
        cursor.execute("DELETE FROM receipts_receipt WHERE id = %s", [logged[4].id])
    assert _problems() == [f"entry 4: receipt {logged[4].id} is missing from the database (deleted)"]


def test_a_deleted_entry_is_caught(logged):
    Leaf.objects.filter(index=6).delete()
    problems = _problems()
    assert problems[0] == "entries 6 to 6 are missing from the log"
    assert "receipt AUDI06 (rcpt_audited06_aaaaa) is not in the log" not in problems  # younger than the grace


def test_two_re_ordered_entries_are_caught(logged):
    first, second = Leaf.objects.get(index=2), Leaf.objects.get(index=3)
    Leaf.objects.filter(index__in=[2, 3]).delete()
    for leaf, index in ((first, 3), (second, 2)):
        leaf.index = index
        leaf.save(force_insert=True)
    assert _problems() == [
        "the published checkpoint of 9 entries does not match the log: an entry below 9 was changed, removed, "
        "added or moved (the log forked from what was published)",
        "the stored tree's hashes at size 9 differ from its leaves: proofs would be wrong",
    ]


def test_two_receipts_swapped_in_their_table_are_caught(logged):
    a, b = Receipt.objects.get(id=logged[0].id), Receipt.objects.get(id=logged[1].id)
    Receipt.objects.filter(id=a.id).update(token="swapping", short_code="SWAP00")
    Receipt.objects.filter(id=b.id).update(token=a.token, short_code=a.short_code, created_at=a.created_at)
    Receipt.objects.filter(id=a.id).update(token=b.token, short_code=b.short_code, created_at=b.created_at)
    problems = _problems()
    assert len(problems) == 2
    assert all("edited after it was signed" in problem for problem in problems)


def test_a_receipt_left_out_of_the_log_is_caught(logged, receipt_factory):
    late = receipt_factory(token="rcpt_auditedlate_aaa", short_code="LATE01")
    Receipt.objects.filter(id=late.id).update(created_at=timezone.now() - timedelta(hours=1))
    Leaf.objects.filter(receipt_id=late.id).delete()
    assert _problems() == ["receipt LATE01 (rcpt_auditedlate_aaa) is not in the log"]


def test_receipts_left_out_are_listed_in_the_order_they_were_written_the_first_100(merchant):
    call_command("seedreceipts", merchant.string_id, "120")
    first = list(Receipt.objects.order_by("id").values_list("short_code", "token")[:100])
    assert _problems() == [f"receipt {code} ({token}) is not in the log" for code, token in first]


def test_a_rewritten_checkpoint_is_caught(logged):
    checkpoint = Checkpoint.objects.get()
    Checkpoint.objects.filter(id=checkpoint.id).update(root=b"\x00" * 32)
    assert "the published checkpoint of 9 entries was altered: its stored root is not the one signed" in _problems()


def test_a_log_rebuilt_after_a_witness_kept_a_checkpoint_is_a_fork(logged, tmp_path, capsys):
    kept = tmp_path / "witness.txt"
    kept.write_text(Checkpoint.objects.get().note)
    # The operator rewrites history: entry 3 replaced by another receipt's, tree and checkpoint made anew.
    Leaf.objects.all().delete()
    Checkpoint.objects.all().delete()
    from ledger.models import Head, Node

    Node.objects.all().delete()
    Head.objects.all().delete()
    Receipt.objects.filter(id=logged[3].id).update(total_amount=1)
    append()
    assert _problems() == []  # consistent with itself...
    with pytest.raises(CommandError, match="9 entries and 2 checkpoints checked: 1 problem"):
        call_command("verifylog", checkpoint=[str(kept)])  # ...but not with what was published
    out = capsys.readouterr().out
    assert "PROBLEM the given checkpoint of 9 entries does not match the log" in out


def test_a_forged_checkpoint_is_caught(logged):
    body, signature = Checkpoint.objects.get().note.split("\n\n")
    name, value = signature.rstrip("\n").rsplit(" ", 1)
    raw = base64.b64decode(value)
    forged = f"{body}\n\n{name} {base64.b64encode(raw[:4] + bytes(64)).decode()}\n"  # the key's id, a made-up signature
    assert audit.audit([forged]).problems == [
        "the given checkpoint of 9 entries is not valid: no valid signature by a published key named "
        "'receipts.example.test/receipts'"
    ]


def test_readyz_reports_the_problems_verifylog_found(logged, client):
    Receipt.objects.filter(id=logged[1].id).update(total_amount=1)
    with pytest.raises(CommandError, match="1 problem"):
        call_command("verifylog")
    detail = client.get("/readyz").json()["details"]["log"]
    assert detail.startswith("1 problem(s) found by verifylog at ")
    assert detail.endswith("first: entry 1 (receipt AUDI01, rcpt_audited01_aaaaa): edited after it was signed "
                           "(its content no longer matches its signature)")  # fmt: skip
