"""The benchmark's verdicts (bench/run.py): ratios come from measurements taken side by
side, round by round, so a disturbance that hits one round does not decide a goal."""

from types import SimpleNamespace

import pytest

from bench import run

# req/s per round, in the order the rounds ran (each round: reference, then the variants).
ROUNDS = {
    "reference": [3000, 3000, 2000],  # the third round ran while the machine was busy
    "anonymous": [1500, 1560, 1100],
    "test key": [1440, 1500, 1050],
    "live key": [1350, 1400, 1000],
}


@pytest.fixture
def measured(monkeypatch):
    served = {name: iter(values) for name, values in ROUNDS.items()}

    def load(args, loadgen, url, scenario, auth, seconds):
        name = "reference" if url == "ref" else {"": "anonymous", "t": "test key", "l": "live key"}[auth]
        rps = next(served[name])
        return run.Result(requests=rps * 10, duration_us=10_000_000, p50_us=4000, p99_us=9000, errors=0)

    monkeypatch.setattr(run, "_load", load)
    monkeypatch.setattr(run, "_check_answer", lambda url, scenario, auth: None)
    monkeypatch.setattr(run, "_authorization", lambda variant, scenario: variant.auth if variant else "")
    args = SimpleNamespace(rounds=3, warmup=0, duration=10)
    variants = [run.Variant("anonymous", ""), run.Variant("test key", "t"), run.Variant("live key", "l")]
    scenario = run.Scenario("getReceipt by token", "get")
    return run._measure_scenario(args, "wrk", scenario, variants, {"reference": "ref", "project": "proj"})


def test_rows_show_the_median_round_and_the_median_ratio(measured, capsys):
    run._print_row("  anonymous", measured["anonymous"], measured["reference"])
    # Rounds' ratios 0.50, 0.52, 0.55: the median is 0.52 (the medians' ratio would be 0.50).
    assert capsys.readouterr().out.split() == ["anonymous", "1500", "4.00", "9.00", "0.52"]


def test_goals_compare_each_round_with_its_neighbours(measured, capsys):
    run._print_goals(SimpleNamespace(), {10_000: {"getReceipt by token": measured}})
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "met       10,000 getReceipt by token: 0.52 of the reference (>= 0.5)" in lines
    # Test key: 4%, 4%, 5% of each round's anonymous throughput; live key 10%, 10%, 9%.
    assert "met       10,000 getReceipt by token, test key: costs 4% (<= 10%)" in lines
    assert "met       10,000 getReceipt by token, live key: costs 10% (<= 10%)" in lines


@pytest.mark.django_db
def test_the_answer_the_benchmark_checks_for_is_getreceipts(api, stored):
    """The benchmark refuses to measure a server whose getReceipt answers other fields."""
    status, body = api.get("getReceipt", {"token": stored.token})
    assert status == 200
    assert set(body["result"]["data"]) == run.RECEIPT_FIELDS
