"""The one writer of receipt rows and its hooks: what other apps add to each change, in
its transaction; a sale nothing wants is its number and its INSERT."""

import re
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from receco.errors import RateLimited
from receipts import hooks, writer
from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.refunds import refund, validate_refund, void
from receipts.validation import validate_sale

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


class Recorder(hooks.Hook):
    """A hook that wants every change and keeps what it heard."""

    name = "recorder"

    def __init__(self, refuse: str | None = None):
        self.changes: list[hooks.Change] = []
        self.in_transaction: list[bool] = []
        self.refuse = refuse

    def wants(self, change):
        return True

    def write(self, change):
        self.changes.append(change)
        self.in_transaction.append(connection.in_atomic_block)
        if change.kind == self.refuse:
            raise RateLimited("refused by the recorder", 60)
        return f"wrote {change.kind}"


@pytest.fixture
def recorder():
    """Register a Recorder for the test (after the apps' own hooks), then remove it."""
    made = []

    def register(**options):
        made.append(Recorder(**options))
        hooks.register(made[-1])
        return made[-1]

    yield register
    for hook in made:
        hooks.unregister(hook.name)


def _sale(sale, **overrides):
    return validate_sale({**sale, **overrides})


def test_a_sale_reaches_every_hook_with_what_it_needs(recorder, merchant, sale):
    heard = recorder()
    created = create_receipt(merchant, _sale(sale, customer_email="ada@example.com"), keyed=True)
    (change,) = heard.changes
    assert (change.kind, change.receipt, change.merchant, change.keyed) == ("created", created.receipt, merchant, True)
    assert (change.email, change.phone) == ("ada@example.com", None)
    assert created.outcomes["recorder"] == "wrote created"
    assert created.outcomes["deliveries"][0].status == "queued"  # messaging's hook, registered by its app


def test_refunds_voids_and_contacts_reach_the_hooks(recorder, stored, receipt_factory):
    heard = recorder()
    made = refund(stored, validate_refund({"token": stored.token, "amount": 1000}), keyed=True)
    change = heard.changes[-1]
    assert (change.kind, change.receipt, change.sale) == ("refunded", made.receipt, stored)
    assert change.sale.status == "partially_refunded"
    writer.update_contact(stored, None, "+2348031234589")
    change = heard.changes[-1]
    assert (change.kind, change.email, change.phone, change.keyed) == ("contact_updated", None, "+2348031234589", False)
    other = receipt_factory(token="rcpt_to_void_000001", short_code="")
    void(other, "wrong till", keyed=True)
    assert (heard.changes[-1].kind, heard.changes[-1].receipt) == ("voided", other)


def test_a_hook_that_refuses_undoes_the_change(recorder, stored):
    recorder(refuse="contact_updated")
    with pytest.raises(RateLimited):
        writer.update_contact(stored, "ada@example.com", None)
    stored.refresh_from_db()
    assert stored.customer_email is None
    assert not stored.deliveries.exists()  # messaging's rows went with it


def test_a_hook_that_refuses_a_sale_leaves_no_receipt(recorder, merchant, sale):
    recorder(refuse="created")
    with pytest.raises(RateLimited):
        create_receipt(merchant, _sale(sale))
    assert not Receipt.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_sale_no_hook_wants_is_its_number_and_its_insert(merchant, sale):
    create_receipt(
        merchant, _sale(sale, token="rcpt_first_sale_0001", short_code="")
    )  # the merchant knows it has no endpoints now
    with CaptureQueriesContext(connection) as queries:
        created = create_receipt(merchant, _sale(sale))
    statements = [query["sql"] for query in queries.captured_queries]
    if connection.vendor == "postgresql":  # one statement, outside any transaction
        (statement,) = statements
        assert statement.startswith('WITH receipt_number AS (INSERT INTO "receipts_receiptseries"')
        assert ') INSERT INTO "receipts_receipt"' in statement
    else:  # the number, then the receipt, in one transaction
        writes = [statement for statement in statements if statement.startswith("INSERT")]
        assert [write.split(" (")[0] for write in writes] == [
            'INSERT INTO "receipts_receiptseries"',
            'INSERT INTO "receipts_receipt"',
        ]
    assert created.receipt.number == 2


@pytest.mark.django_db(transaction=True)
def test_a_sale_a_hook_wants_takes_a_transaction(recorder, merchant, sale):
    heard = recorder()
    created = create_receipt(merchant, _sale(sale))
    assert created.outcomes == {"recorder": "wrote created"}
    assert heard.changes[0].receipt.pk == created.receipt.pk
    assert heard.in_transaction == [True]  # the receipt's INSERT and the hook's rows commit together


# The ORM's and SQL's ways of writing rows of receipts_receipt.
_WRITES = re.compile(
    r"\bReceipt\.objects\.(create|bulk_create|get_or_create|update_or_create|bulk_update)\b"
    r"|\bReceipt\.objects(\.\w+\([^()]*\))*\.(update|delete)\("
    r"|\bReceipt\((\w+=[\w.]+, )*\*\*|(INSERT INTO|UPDATE|COPY) \"?receipts_receipt"
)


def test_no_module_but_the_writer_writes_receipt_rows():
    """Only the writer writes receipt rows; and the seeding's writer, whose made-up receipts
    go through no hook."""
    writers = set()
    packages = ("receco", "merchants", "receipts", "ledger", "messaging", "einvoicing", "webhooks", "privacy", "locker")
    for package in (*packages, "dashboard", "customers", "agentapi", "callbacks"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts and _WRITES.search(path.read_text()):
                writers.add(str(path.relative_to(ROOT)))
    assert writers == {"receipts/writer.py", "receipts/seed_writer.py"}
