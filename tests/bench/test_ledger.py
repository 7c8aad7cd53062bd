"""The receipt log's benchmark (bench/ledger.py), run as the docs run it at its smallest, on
a database of its own that it makes: the appender's figures, then the proof bundles'."""

import re

import pytest


@pytest.mark.postgres
def test_it_appends_receipts_and_serves_their_proofs(smoke):
    out = smoke.run(
        "ledger.py", "--receipts", "30", "--batch", "20", "--proofs", "5",
        DATABASE_URL=smoke.database_url("ledger"),
    )  # fmt: skip
    for line in (
        r"made 30 receipts in [\d.]+ s",
        r"database: postgresql; batch 20",
        r"appended 30 receipts in [\d.]+ s: \d+ receipts/s \(batches: median \d+/s, slowest \d+/s\); log size 30",
        r"  this process's CPU: \d+ us a receipt, \d+ receipts per CPU second .+",
        r"proof bundles over a log of 30: p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms \(5 requests\)",
        r"  this process's CPU a request: p50 [\d.]+ ms, p99 [\d.]+ ms",
    ):
        assert re.search(f"^{line}$", out, re.M), f"no line {line!r}:\n{out}"
