"""Retention (privacy.retention, ``applyretention``): contacts go RECECO_CONTACT_RETENTION_DAYS
after a receipt's last change, receipts RECECO_RECEIPT_RETENTION_YEARS after they were
issued (a sale with its refunds); the log stays verifiable and says what retention removed;
a second run finds nothing to do."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from ledger import audit
from ledger.models import Leaf
from messaging.models import Delivery
from privacy import retention
from privacy.models import ErasureRecord
from privacy.tasks import apply_retention
from receipts import refunds
from receipts.models import Receipt, RemovedReceipt, Void
from receipts.writer import update_contact
from tests.ledger.conftest import append
from tests.privacy.conftest import PHONE
from webhooks.models import Event

pytestmark = pytest.mark.django_db

NOW = timezone.now()
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)


@pytest.fixture(autouse=True)
def _defaults(settings):
    settings.RECECO_CONTACT_RETENTION_DAYS = 180
    settings.RECECO_RECEIPT_RETENTION_YEARS = 6


def _aged(receipt, *, changed=None, issued=None):
    """Make ``receipt`` (and what was made with it) as old as given."""
    if changed is not None:
        Receipt.objects.filter(pk=receipt.pk).update(updated_at=changed)
        Delivery.objects.filter(receipt=receipt).update(created_at=changed)
        Event.objects.filter(receipt=receipt).update(created_at=changed)
    if issued is not None:
        Receipt.objects.filter(pk=receipt.pk).update(created_at=issued)


def _contact(receipt) -> tuple:
    receipt.refresh_from_db()
    (event,) = Event.objects.filter(receipt=receipt)
    body = json.loads(event.body)["data"]["object"]
    destinations = sorted(Delivery.objects.filter(receipt=receipt).values_list("destination", flat=True))
    return receipt.customer_phone, body["customer_phone"], destinations


def test_contacts_go_once_the_receipt_has_not_changed_for_the_retention_days(sell, merchant, endpoints):
    older = sell(merchant, "rcpt_older_contact_a", "OLDER1", customer_phone=PHONE)
    younger = sell(merchant, "rcpt_younger_contact", "YOUNG1", customer_phone=PHONE)
    _aged(older, changed=NOW - 180 * DAY - SECOND)
    _aged(younger, changed=NOW - 180 * DAY + SECOND)

    erased = retention.apply(now=NOW)

    assert erased.counts == {
        "receipts_removed": 0,
        "receipts": 1,
        "deliveries": 1,
        "webhook_events": 1,
        "locker": 0,
    }
    assert _contact(older) == (None, None, [""])
    assert _contact(younger) == (PHONE, PHONE, [PHONE])
    record = ErasureRecord.objects.get()
    assert (record.via, record.kind, record.counts) == ("retention", "any", erased.counts)


def test_a_contact_given_later_restarts_the_clock(sell, merchant):
    receipt = sell(merchant, "rcpt_given_later_aa", "LATER1")
    _aged(receipt, changed=NOW - 200 * DAY)
    update_contact(receipt, None, PHONE)
    assert retention.apply(now=NOW).counts["receipts"] == 0
    assert Receipt.objects.get(pk=receipt.pk).customer_phone == PHONE


def test_receipts_go_after_six_years_with_their_refunds_voids_deliveries_and_events(sell, merchant, endpoints):
    expired = sell(merchant, "rcpt_expired_sale_a", "EXPIR1", customer_phone=PHONE)
    voided = sell(merchant, "rcpt_expired_void_a", "EXPIR2")
    refunds.void(voided, "Rung up twice", keyed=True)
    kept = sell(merchant, "rcpt_kept_sale_aaaa", "KEPT01")
    six_years = NOW.replace(year=NOW.year - 6)
    for receipt in (expired, voided):
        _aged(receipt, issued=six_years - SECOND)
    _aged(kept, issued=six_years + SECOND)
    gone = [expired.pk, voided.pk]

    erased = retention.apply(now=NOW)

    assert erased.counts["receipts_removed"] == 2
    assert list(Receipt.objects.values_list("short_code", flat=True)) == ["KEPT01"]
    assert not Void.objects.exists()
    assert not Delivery.objects.filter(receipt_id__in=gone).exists()
    assert not Event.objects.filter(receipt_id__in=gone).exists()
    webhook_deliveries = Delivery.objects.filter(channel="webhook")
    assert not webhook_deliveries.exclude(payload_id__in=Event.objects.values("pk")).exists()  # none without its event
    removed = RemovedReceipt.objects.order_by("pk")
    assert [(row.receipt_id, row.issued_at) for row in removed] == [(pk, six_years - SECOND) for pk in gone]


def test_a_sale_stays_while_a_refund_of_it_is_younger_and_goes_with_it(sell, merchant):
    sale = sell(merchant, "rcpt_refunded_sale_a", "REFND1")
    made = refunds.refund(sale, refunds.validate_refund({"token": sale.token, "amount": 10000}), keyed=True)
    six_years = NOW.replace(year=NOW.year - 6)
    _aged(sale, issued=six_years - 30 * DAY)
    _aged(made.receipt, issued=six_years + DAY)
    assert retention.apply(now=NOW).counts["receipts_removed"] == 0
    assert Receipt.objects.count() == 2

    _aged(made.receipt, issued=six_years - SECOND)
    assert retention.apply(now=NOW).counts["receipts_removed"] == 2
    assert not Receipt.objects.exists()


def test_the_log_says_removed_by_retention_and_stays_verifiable(sell, merchant, capsys):
    sales = [sell(merchant, f"rcpt_logged_sale_{n:03d}", f"LOGGD{n}") for n in range(4)]
    refunds.void(sales[1], "Rung up twice", keyed=True)
    append()
    for sale in sales[:2]:
        _aged(sale, issued=NOW.replace(year=NOW.year - 7))

    retention.apply(now=NOW)

    report = audit.audit()
    assert (report.problems, report.size, report.removed) == ([], 5, 3)  # two sales and a void
    call_command("verifylog")
    assert capsys.readouterr().out == (
        "OK 5 entries and 1 checkpoints checked (3 of them removed by retention: their leaf hashes checked, "
        "not their content): no problem\n"
    )
    assert Leaf.objects.count() == 5


def test_a_receipt_deleted_otherwise_is_still_a_problem(sell, merchant):
    sale = sell(merchant, "rcpt_deleted_behind_a", "BEHND1")
    append()
    Receipt.objects.filter(pk=sale.pk).delete()
    assert audit.audit().problems == [f"entry 0: receipt {sale.pk} is missing from the database (deleted)"]


def test_a_second_run_finds_nothing_to_do(sell, merchant, endpoints):
    for n in range(3):
        receipt = sell(merchant, f"rcpt_twice_sale_{n:04d}", f"TWICE{n}", customer_phone=PHONE)
        _aged(receipt, changed=NOW - 365 * DAY, issued=NOW.replace(year=NOW.year - 7) if n == 0 else None)
    first = retention.apply(now=NOW)
    assert first.counts == {
        "receipts_removed": 1,
        "receipts": 2,
        "deliveries": 2,
        "webhook_events": 2,
        "locker": 0,
    }
    assert retention.apply(now=NOW).total == 0
    assert ErasureRecord.objects.count() == 1


def test_work_goes_in_batches_of_ids(sell, merchant, monkeypatch):
    monkeypatch.setattr(retention, "BATCH", 2)
    receipts = [sell(merchant, f"rcpt_batched_sale_{n:03d}", f"BATCH{n}", customer_phone=PHONE) for n in range(5)]
    for receipt in receipts:
        _aged(receipt, changed=NOW - 365 * DAY)
    _aged(receipts[4], issued=NOW.replace(year=NOW.year - 7))
    assert retention.apply(now=NOW).counts == {
        "receipts_removed": 1,
        "receipts": 4,
        "deliveries": 4,
        "webhook_events": 0,
        "locker": 0,
    }
    assert not Receipt.objects.filter(customer_phone=PHONE).exists()


def test_the_29th_of_february_counts_back_to_the_28th(settings):
    leap_day = NOW.replace(year=2028, month=2, day=29)
    assert retention.receipts_cutoff(leap_day) == leap_day.replace(year=2022, day=28)


def test_the_command_says_what_it_removed(sell, merchant, capsys):
    receipt = sell(merchant, "rcpt_command_sale_aa", "CMMND1", customer_phone=PHONE)
    _aged(receipt, changed=timezone.now() - 181 * DAY)
    call_command("applyretention")
    assert capsys.readouterr().out == (
        "0 receipts removed; contacts removed from 1 receipts, 1 deliveries and 0 webhook events; "
        "0 expired locker sign-ins and sessions deleted\n"
    )


def test_the_task_runs_it(sell, merchant):
    receipt = sell(merchant, "rcpt_task_sale_aaaa", "TASKS1", customer_phone=PHONE)
    _aged(receipt, changed=timezone.now() - 181 * DAY)
    result = apply_retention.enqueue()
    assert result.return_value == {
        "receipts_removed": 0,
        "receipts": 1,
        "deliveries": 1,
        "webhook_events": 0,
        "locker": 0,
    }
