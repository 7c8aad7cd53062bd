"""The load benchmarks' database and requests (bench/workload.py): the answer checked before
the load is getReceipt's, and a database seeded for another run is seeded again."""

import pytest
from django.core.management import call_command
from django.db import connection

from bench import workload
from merchants.models import Merchant
from receipts.models import Receipt


@pytest.mark.django_db
def test_the_answer_the_benchmark_checks_for_is_getreceipts(api, stored):
    """The benchmark refuses to measure a server whose getReceipt answers other fields."""
    status, body = api.get("getReceipt", {"token": stored.token})
    assert status == 200
    assert set(body["result"]["data"]) == workload.RECEIPT_FIELDS


@pytest.mark.parametrize(
    ("seeded", "spread", "count", "merchants", "stale"),
    [
        (0, 0, 10_000, 1000, False),  # empty: seeded
        (10_000, 1000, 10_000, 1000, False),  # as wanted: reused
        (5_000, 1000, 10_000, 1000, False),  # too few: topped up over the same merchants
        (10_000, 1, 10_000, 1000, True),  # one merchant where the run's largest database has 1,000
        (20_000, 1000, 10_000, 1000, True),  # too many
    ],
)
def test_a_database_seeded_over_other_merchants_is_seeded_again(seeded, spread, count, merchants, stale):
    assert workload.stale(seeded, spread, count, merchants) is stale


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_seeded_receipts_are_counted_with_their_merchants_and_removed_alone(receipt_factory):
    other = receipt_factory()  # another merchant's: not seeded
    Merchant.objects.create(string_id=workload.SEED_MERCHANT, name="Bench Shop", is_test=True, require_api_key=False)
    call_command("seedreceipts", workload.SEED_MERCHANT, "30", "--merchants", "3")
    connection.ensure_connection()
    assert workload.count_seeded(connection.connection) == (30, 3)
    workload.delete_seeded(connection.connection)
    assert workload.count_seeded(connection.connection) == (0, 0)
    assert list(Receipt.objects.all()) == [other]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_getreceipt_scenarios_read_the_seeded_receipts_only(receipt_factory, tmp_path):
    """Another merchant's receipt in the table (another benchmark's) is never drawn: the
    benchmark's keys could not read it."""
    other = receipt_factory()
    Merchant.objects.create(string_id=workload.SEED_MERCHANT, name="Bench Shop", is_test=True, require_api_key=False)
    call_command("seedreceipts", workload.SEED_MERCHANT, "4", "--merchants", "2")
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    scenarios = workload.draw_scenarios(url, tmp_path)
    seeded = Receipt.objects.exclude(pk=other.pk)
    assert sorted((tmp_path / "tokens.txt").read_text().split()) == sorted(seeded.values_list("token", flat=True))
    assert sorted((tmp_path / "short_codes.txt").read_text().split()) == sorted(
        seeded.values_list("short_code", flat=True)
    )
    assert [(scenario.name, scenario.refs) for scenario in scenarios[:2]] == [
        ("getReceipt by short code", tmp_path / "short_codes.txt"),
        ("getReceipt by token", tmp_path / "tokens.txt"),
    ]
