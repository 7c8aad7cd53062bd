"""The two delivery tables move into the one outbox with nothing lost: the database is
migrated back to before the outbox, given deliveries in every state of both pipelines,
and migrated forward again (in the manner of django-test-migrations). Runs on SQLite and,
in CI, on PostgreSQL."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from messaging import outbox
from messaging.models import Delivery
from receipts.models import Receipt
from webhooks.models import Attempt

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("receipts", "0005_refunds_voids_and_details"),
    ("webhooks", "0002_outbox_without_database_constraints"),
    ("messaging", None),
]
NOW = timezone.now()
LATER = NOW + timedelta(minutes=4)


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


@pytest.fixture
def old():
    """The historical models before the outbox, with one merchant, receipt, endpoint and
    event; the database goes forward to the latest state after the test, whatever it did."""
    executor = _migrate(BEFORE)
    # The other apps stay as they are: their models as their latest migrations make them.
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in {app for app, _ in BEFORE}]
    apps = executor.loader.project_state([*(target for target in BEFORE if target[1]), *others]).apps
    try:
        merchant = apps.get_model("merchants", "Merchant").objects.create(string_id="mama-put", name="Mama Put")
        receipt = apps.get_model("receipts", "Receipt").objects.create(
            token="rcpt_migrated_0001",
            short_code="MIGR01",
            merchant=merchant,
            merchant_name="Mama Put",
            accent_color="#c2410c",
            total_amount=1000,
            currency="NGN",
            transaction_date=NOW,
            items=[{"name": "Tea", "quantity": 1, "unit_price": 1000, "total_price": 1000}],
            fingerprint="f" * 64,
        )
        endpoint = apps.get_model("webhooks", "Endpoint").objects.create(
            merchant=merchant, url="https://hooks.example.com/receco", secret="whsec_x"
        )
        event = apps.get_model("webhooks", "Event").objects.create(
            public_id="evt_migrated", merchant=merchant, receipt=receipt, type="receipt.created",
            livemode=True, body="{}", created_at=NOW,
        )  # fmt: skip
        yield apps, merchant, receipt, endpoint, event
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_every_delivery_of_both_pipelines_moves_into_the_outbox_in_its_state(old):
    apps, merchant, receipt, endpoint, event = old
    sent = apps.get_model("receipts", "Delivery").objects
    by_state = {
        "queued": sent.create(receipt=receipt, channel="email", destination="a@example.com", status="queued"),
        "sending": sent.create(receipt=receipt, channel="sms", destination="+2348031234589", status="sending"),
        "retrying": sent.create(
            receipt=receipt, channel="email", destination="b@example.com", status="retrying", attempts=2,
            next_attempt_at=LATER, last_error="SMTPServerDisconnected: gone",
        ),
        # The dashboard's "try again now" left it retrying with no time, for a task queued then.
        "retry now": sent.create(receipt=receipt, channel="email", destination="c@example.com", status="retrying"),
        "sent": sent.create(receipt=receipt, channel="email", destination="d@example.com", status="sent", attempts=1,
                            sent_at=NOW, keyed=True),
        "failed": sent.create(receipt=receipt, channel="sms", destination="+2348031234500", status="failed",
                              attempts=5, last_error="SmsError"),
        "sink": sent.create(receipt=receipt, channel="email", destination="e@example.com", status="sink"),
    }  # fmt: skip
    hooks = apps.get_model("webhooks", "Delivery").objects
    attempts = apps.get_model("webhooks", "Attempt").objects
    webhooks = {
        status: hooks.create(event=event, endpoint=endpoint, status=status, attempts=attempts_made,
                             next_attempt_at=LATER if status == "retrying" else None,
                             last_status_code=500 if attempts_made else None)
        for status, attempts_made in (
            ("pending", 0), ("sending", 0), ("retrying", 2), ("succeeded", 1), ("failed", 9)
        )
    }  # fmt: skip
    for status in ("retrying", "failed"):
        attempts.create(delivery=webhooks[status], succeeded=False, status_code=500, duration_ms=40, error="first")
        attempts.create(delivery=webhooks[status], succeeded=False, status_code=500, duration_ms=40,
                        error="answered HTTP 500")  # fmt: skip
    attempts.create(delivery=webhooks["succeeded"], succeeded=True, status_code=200, duration_ms=12)
    gone = apps.get_model("webhooks", "Event").objects.create(
        public_id="evt_deleted", merchant=merchant, type="receipt.created", livemode=True, body="{}", created_at=NOW
    )
    orphan = hooks.create(event=gone, endpoint=endpoint, status="pending")
    attempts.create(delivery=orphan, succeeded=False, duration_ms=1, error="x")
    gone.delete()  # no constraint in the database: its delivery is left pointing at nothing

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    moved = {delivery.pk: delivery for delivery in Delivery.objects.all()}
    # Receipts' deliveries keep their ids; every one is the merchant's, of the receipt.
    expected = {
        "queued": ("pending", 0),
        "sending": ("sending", 1),  # its attempt, counted in memory only before, is counted
        "retrying": ("retrying", 2),
        "retry now": ("pending", 0),
        "sent": ("sent", 1),
        "failed": ("failed", 5),
        "sink": ("sink", 0),
    }
    for state, row in by_state.items():
        delivery = moved.pop(row.pk)
        assert (delivery.status, delivery.attempts) == expected[state], state
        assert (delivery.channel, delivery.destination, delivery.keyed) == (row.channel, row.destination, row.keyed)
        assert (delivery.merchant_id, delivery.receipt_id, delivery.payload_id) == (merchant.pk, receipt.pk, None)
        assert (delivery.next_attempt_at, delivery.last_error, delivery.sent_at) == (
            row.next_attempt_at,
            row.last_error,
            row.sent_at,
        )
    # Webhook deliveries come after them, each with its attempts; the orphan is left behind.
    offset = max(row.pk for row in by_state.values())
    expected = {"pending": "pending", "sending": "sending", "retrying": "retrying", "succeeded": "sent",
                "failed": "failed"}  # fmt: skip
    for status, row in webhooks.items():
        delivery = moved.pop(row.pk + offset)
        assert delivery.status == expected[status]
        assert (delivery.channel, delivery.destination, delivery.payload_id) == ("webhook", str(endpoint.pk), event.pk)
        assert (delivery.merchant_id, delivery.receipt_id, delivery.next_attempt_at) == (
            merchant.pk,
            None,
            row.next_attempt_at,
        )
        assert delivery.attempts == row.attempts + (status == "sending")
        assert delivery.last_status_code == row.last_status_code
    assert moved == {}
    assert Delivery.objects.get(pk=webhooks["retrying"].pk + offset).last_error == "answered HTTP 500"
    assert Delivery.objects.get(pk=webhooks["succeeded"].pk + offset).sent_at == webhooks["succeeded"].updated_at
    assert Attempt.objects.filter(delivery_id=webhooks["retrying"].pk + offset).count() == 2
    assert Attempt.objects.count() == 5
    # What was on its way is on its way still: claimable now, or at its time.
    claimed = {pk for pk, _, _ in outbox.claim(limit=100, now=LATER)}
    unfinished = ["queued", "retrying", "retry now"]
    assert claimed == {by_state[s].pk for s in unfinished} | {webhooks[s].pk + offset for s in ("pending", "retrying")}
    # New deliveries are numbered after the moved ones.
    again = Receipt.objects.get(pk=receipt.pk)
    assert outbox.add("email", merchant.pk, "f@example.com", receipt=again).pk > offset + max(
        row.pk for row in webhooks.values()
    )
