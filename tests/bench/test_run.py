"""The benchmark's verdicts (bench/run.py): ratios come from measurements taken side by
side, round by round, so a disturbance that hits one round does not decide a goal."""

from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection

from bench import run
from merchants.models import Merchant
from receipts.models import Receipt

# req/s per round, in the order the rounds ran (each round: reference, floor, then the variants).
ROUNDS = {
    "reference": [3000, 3000, 2000],  # the third round ran while the machine was busy
    "floor": [1600, 1600, 1200],
    "anonymous": [1500, 1560, 1100],
    "test key": [1440, 1500, 1050],
    "live key": [1350, 1400, 1000],
}


@pytest.fixture
def measured(monkeypatch):
    served = {name: iter(values) for name, values in ROUNDS.items()}

    def load(args, loadgen, url, scenario, auth, seconds):
        by_auth = {"": "anonymous", "t": "test key", "l": "live key"}
        name = {"ref": "reference", "floor": "floor"}.get(url) or by_auth[auth]
        rps = next(served[name])
        return run.Result(requests=rps * 10, duration_us=10_000_000, p50_us=4000, p99_us=9000, errors=0)

    monkeypatch.setattr(run, "_load", load)
    monkeypatch.setattr(run, "_check_answer", lambda url, scenario, auth: None)
    monkeypatch.setattr(run, "_authorization", lambda variant, scenario: variant.auth if variant else "")
    args = SimpleNamespace(rounds=3, warmup=0, duration=10)
    variants = [run.Variant("anonymous", ""), run.Variant("test key", "t"), run.Variant("live key", "l")]
    scenario = run.Scenario("getReceipt by token", "get")
    return run._measure_scenario(
        args, "wrk", scenario, variants, {"reference": "ref", "floor": "floor", "project": "proj"}
    )


def test_rows_show_the_median_round_and_the_median_ratio(measured, capsys):
    run._print_row("  anonymous", measured["anonymous"])
    # To the reference, rounds' ratios 0.50, 0.52, 0.55: the median is 0.52 (the medians'
    # ratio would be 0.50); to the floor 0.94, 0.97, 0.92: 0.94.
    assert capsys.readouterr().out.split() == ["anonymous", "1500", "4.00", "9.00", "0.52", "0.94"]


def test_the_floor_row_shows_its_share_of_the_reference(measured, capsys):
    run._print_row("  Django's floor", measured["floor"])
    assert capsys.readouterr().out.split() == ["Django's", "floor", "1600", "4.00", "9.00", "0.53", "-"]


def test_a_keyed_call_is_compared_with_the_floors_one_figure(measured, capsys):
    """The floor has no keys: a live key's share is of its anonymous figure (0.84, 0.88, 0.83)."""
    run._print_row("  live key", measured["live key"])
    assert capsys.readouterr().out.split() == ["live", "key", "1350", "4.00", "9.00", "0.47", "0.84"]


def test_goals_compare_each_round_with_its_neighbours(measured, capsys):
    run._print_goals(SimpleNamespace(), {10_000: {"getReceipt by token": measured}})
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "met       10,000 getReceipt by token: 0.52 of the reference (>= 0.5)" in lines
    # Test key: 4%, 4%, 5% of each round's anonymous throughput; live key 10%, 10%, 9%.
    assert "met       10,000 getReceipt by token, test key: costs 4% (<= 10%)" in lines
    assert "met       10,000 getReceipt by token, live key: costs 10% (<= 10%)" in lines
    assert "MISSED    10,000 getReceipt by token, anonymous: 0.94 of Django's floor (>= 0.95)" in lines
    assert not any("floor" in line and "key" in line for line in lines)  # getReceipt's goal is anonymous


def test_a_sales_goal_is_0_9_of_the_floor_anonymous_and_with_a_live_key(measured, capsys):
    run._print_goals(SimpleNamespace(), {10_000: {run.CREATE_SCENARIO: measured}})
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if "floor" in line]
    assert lines == [
        "met       10,000 createReceiptFromPOS, fresh tokens, anonymous: 0.94 of Django's floor (>= 0.9)",
        "MISSED    10,000 createReceiptFromPOS, fresh tokens, live key: 0.84 of Django's floor"
        " (the floor's anonymous figure: it has no keys) (>= 0.9)",
    ]


@pytest.mark.django_db
def test_the_answer_the_benchmark_checks_for_is_getreceipts(api, stored):
    """The benchmark refuses to measure a server whose getReceipt answers other fields."""
    status, body = api.get("getReceipt", {"token": stored.token})
    assert status == 200
    assert set(body["result"]["data"]) == run.RECEIPT_FIELDS


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
    assert run._stale(seeded, spread, count, merchants) is stale


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_seeded_receipts_are_counted_with_their_merchants_and_removed_alone(receipt_factory):
    other = receipt_factory()  # another merchant's: not seeded
    Merchant.objects.create(string_id=run.SEED_MERCHANT, name="Bench Shop", is_test=True, require_api_key=False)
    call_command("seedreceipts", run.SEED_MERCHANT, "30", "--merchants", "3")
    connection.ensure_connection()
    assert run._seeded(connection.connection) == (30, 3)
    run._delete_seeded(connection.connection)
    assert run._seeded(connection.connection) == (0, 0)
    assert list(Receipt.objects.all()) == [other]
