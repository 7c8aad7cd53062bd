"""CPU per request in-process (bench/cpu.py), run as the docs run it on a database that
bench/run.py prepared: each scenario's fastest and median round."""

import re

import pytest

from tests.bench.conftest import ROOT


@pytest.mark.postgres
def test_it_prints_each_scenarios_cpu_per_request(smoke, prepared_database):
    out = smoke.run(
        "cpu.py", "--database-url", prepared_database, "--redis-url", smoke.redis_url,
        "--requests", "5", "--rounds", "2",
    )  # fmt: skip
    assert out.startswith(f"root {ROOT} (the project)  5 requests x 2 rounds, CPU µs per request\n")
    assert re.search(r"^  scenario +fastest +median +rounds$", out, re.M)
    for scenario in ("getReceipt by short code", "getReceipt by token", "createReceiptFromPOS"):
        assert re.search(rf"^  {scenario} +\d+ +\d+   \d+ \d+$", out, re.M), f"no figures for {scenario}:\n{out}"


@pytest.mark.postgres
def test_it_runs_djangos_floor_instead(smoke, prepared_database):
    out = smoke.run(
        "cpu.py", "--database-url", prepared_database, "--redis-url", smoke.redis_url,
        "--requests", "5", "--rounds", "1", "--floor",
    )  # fmt: skip
    assert out.startswith(f"root {ROOT} (Django's floor)  5 requests x 1 rounds, CPU µs per request\n")
    assert re.search(r"^  createReceiptFromPOS +\d+ +\d+   \d+$", out, re.M)
