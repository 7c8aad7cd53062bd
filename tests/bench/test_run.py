"""The load benchmark (bench/run.py): ratios come from measurements taken side by side,
round by round, so a disturbance that hits one round does not decide a goal; and the
script runs as the docs run it, printing its figures."""

import re
from types import SimpleNamespace

import pytest

from bench import run, workload
from tests.bench.conftest import RECEIPTS

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
    monkeypatch.setattr(run, "check_answer", lambda url, scenario, auth: None)
    monkeypatch.setattr(run, "authorization", lambda variant, scenario: variant.auth if variant else "")
    args = SimpleNamespace(rounds=3, warmup=0, duration=10)
    variants = [workload.Variant("anonymous", ""), workload.Variant("test key", "t"), workload.Variant("live key", "l")]
    scenario = workload.Scenario("getReceipt by token", "get")
    return run.measure_scenario(
        args, "wrk", scenario, variants, {"reference": "ref", "floor": "floor", "project": "proj"}
    )


def test_rows_show_the_median_round_and_the_median_ratio(measured, capsys):
    run.print_row("  anonymous", measured["anonymous"])
    # To the reference, rounds' ratios 0.50, 0.52, 0.55: the median is 0.52 (the medians'
    # ratio would be 0.50); to the floor 0.94, 0.97, 0.92: 0.94.
    assert capsys.readouterr().out.split() == ["anonymous", "1500", "4.00", "9.00", "0.52", "0.94"]


def test_the_floor_row_shows_its_share_of_the_reference(measured, capsys):
    run.print_row("  Django's floor", measured["floor"])
    assert capsys.readouterr().out.split() == ["Django's", "floor", "1600", "4.00", "9.00", "0.53", "-"]


def test_a_keyed_call_is_compared_with_the_floors_one_figure(measured, capsys):
    """The floor has no keys: a live key's share is of its anonymous figure (0.84, 0.88, 0.83)."""
    run.print_row("  live key", measured["live key"])
    assert capsys.readouterr().out.split() == ["live", "key", "1350", "4.00", "9.00", "0.47", "0.84"]


def test_goals_compare_each_round_with_its_neighbours(measured, capsys):
    run.print_goals(SimpleNamespace(), {10_000: {"getReceipt by token": measured}})
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "met       10,000 getReceipt by token: 0.52 of the reference (>= 0.5)" in lines
    # Test key: 4%, 4%, 5% of each round's anonymous throughput; live key 10%, 10%, 9%.
    assert "met       10,000 getReceipt by token, test key: costs 4% (<= 10%)" in lines
    assert "met       10,000 getReceipt by token, live key: costs 10% (<= 10%)" in lines
    assert "MISSED    10,000 getReceipt by token, anonymous: 0.94 of Django's floor (>= 0.95)" in lines
    assert not any("floor" in line and "key" in line for line in lines)  # getReceipt's goal is anonymous


def test_a_sales_goal_is_0_9_of_the_floor_anonymous_and_with_a_live_key(measured, capsys):
    run.print_goals(SimpleNamespace(), {10_000: {workload.CREATE_SCENARIO: measured}})
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if "floor" in line]
    assert lines == [
        "met       10,000 createReceiptFromPOS, fresh tokens, anonymous: 0.94 of Django's floor (>= 0.9)",
        "MISSED    10,000 createReceiptFromPOS, fresh tokens, live key: 0.84 of Django's floor"
        " (the floor's anonymous figure: it has no keys) (>= 0.9)",
    ]


def _row(label: str, shares: int = 2) -> re.Pattern:
    """A row of figures (req/s, p50, p99, then shares or -) under ``label``, without errors."""
    share = r" +(?:\d+\.\d\d|-)"
    return re.compile(rf"^    {re.escape(label)} +\d+ +\d+\.\d\d +\d+\.\d\d{share * shares}$", re.M)


@pytest.mark.postgres
def test_it_measures_the_project_beside_the_reference_and_the_floor(smoke, bench_servers):
    """As docs/benchmarks.md runs it, at its smallest, with the Python load generator that
    stands in for wrk, on the smoke runs' servers: each scenario's rows of figures, then the goals."""
    out = smoke.run(
        "run.py", "--receipts", RECEIPTS, "--duration", "0.2", "--warmup", "0", "--rounds", "1",
        "--connections", "2", "--workers", "1", "--loadgen", "python",
        "--variants", "anonymous,live key", "--only", "by token", "--only", "fresh tokens",
        "--database-url", smoke.server, "--database-prefix", smoke.prefix, "--redis-url", smoke.redis_url,
        "--project-url", bench_servers["project"], "--reference-url", bench_servers["reference"],
        "--floor-url", bench_servers["floor"], **bench_servers.env,
    )  # fmt: skip
    for name in ("project", "reference", "floor"):
        assert f"  given     {name} served at {bench_servers[name]} (not started by this run)\n" in out
    assert out.startswith("Receco load benchmark\n")
    assert "  load      bench/loadgen.py (Python threads), 2 connections, on loopback" in out
    assert re.search(r"^  scenario +req/s +p50 ms +p99 ms +of ref +of floor$", out, re.M)
    scenarios = re.split(r"^  (getReceipt by token|createReceiptFromPOS, fresh tokens)$", out, flags=re.M)
    assert scenarios[1::2] == ["getReceipt by token", "createReceiptFromPOS, fresh tokens"]
    for rows in scenarios[2::2]:
        for label in ("bare reference (WSGI + psycopg)", "Django's floor (no middleware)", "anonymous", "live key"):
            assert _row(label).search(rows), f"no row of figures for {label}:\n{out}"
    goals = out.split("\nGoals\n", 1)[1].splitlines()
    assert goals
    assert all(re.match(r"  (met   |MISSED) ", line) for line in goals)


@pytest.mark.postgres
def test_it_measures_receipt_counts_side_by_side(smoke, bench_servers):
    """docs/scaling.md's --interleave at its smallest, on the smoke runs' servers: each
    count's rows, then the goals."""
    out = smoke.run(
        "run.py", "--receipts", RECEIPTS, "--interleave", "--duration", "0.2", "--warmup", "0", "--rounds", "1",
        "--connections", "2", "--workers", "1", "--loadgen", "python", "--variants", "anonymous",
        "--only", "short code", "--only", "with a webhook",
        "--database-url", smoke.server, "--database-prefix", smoke.prefix, "--redis-url", smoke.redis_url,
        "--project-url", bench_servers["project"], "--reference-url", bench_servers["reference"],
        **bench_servers.env,
    )  # fmt: skip
    for scenario in ("getReceipt by short code", "createReceiptFromPOS, with a webhook"):
        assert f"\n  {scenario}:      req/s   p50 ms   p99 ms   ratio to reference\n" in out
    assert len(_row(f"{RECEIPTS}: bare reference").findall(out)) == 2
    assert len(_row(f"{RECEIPTS}: anonymous").findall(out)) == 2
    assert "\nGoals\n" in out
