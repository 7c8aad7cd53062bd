"""CPU per sale in-process (bench/sale_cpu.py), run as the docs run it at its smallest: a
merchant without webhook endpoints and one with, and the ratio of their CPU."""

import re

import pytest


@pytest.mark.postgres
def test_it_prints_the_cpu_of_a_sale_with_and_without_an_endpoint(smoke):
    out = smoke.run(
        "sale_cpu.py", "--sales", "5", "--block", "5",
        DATABASE_URL=smoke.database_url("sale_cpu"), REDIS_URL=smoke.redis_url,
        RECECO_CACHE_PREFIX=f"receco-bench-{smoke.prefix}-sale-cpu",
    )  # fmt: skip
    assert re.search(r"^load average [\d.]+ [\d.]+ [\d.]+; 5 sales each$", out, re.M)
    for name in ("without an endpoint", "with an endpoint"):
        line = rf"^  {name} +CPU mean [\d.]+ ms, median [\d.]+ ms; wall median [\d.]+ ms, mean [\d.]+ ms$"
        assert re.search(line, out, re.M), f"no figures for {name}:\n{out}"
    assert re.search(r"^  CPU ratio with/without: [\d.]+$", out, re.M)
