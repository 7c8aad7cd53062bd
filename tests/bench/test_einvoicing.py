"""E-invoicing's worker benchmark (bench/einvoicing.py), run as the docs run it at its
smallest, on a database of its own that it makes, against the double of NRS."""

import re

import pytest


@pytest.mark.postgres
def test_it_times_the_workers_reports_to_the_double(smoke):
    out = smoke.run("einvoicing.py", "--sales", "5", "--latency-ms", "5", DATABASE_URL=smoke.database_url("einvoicing"))
    for line in (
        r"database: postgresql; 5 sales; 1 worker\(s\); NRS latency 5 ms",
        r"queued 5 reports in [\d.]+ s \(the sales' own transactions\)",
        r"reported 5 in [\d.]+ s: [\d.]+ reports/s \(from the double's first call to the last confirmation\); "
        r"15 invoice calls, \d+ code lists",
        r"  the workers' CPU: [\d.]+ ms a report, start-up included \(load average [\d.]+ on \d+ CPUs\)",
    ):
        assert re.search(f"^{line}$", out, re.M), f"no line {line!r}:\n{out}"
