"""The agent's drain benchmark (bench/drain.py), run as the docs run it at its smallest: a
backlog queued offline drains through the delaying proxy and every line of figures is
printed, then whether the service holds each sale once."""

import re

import pytest

from tests.bench.conftest import RECEIPTS


@pytest.mark.postgres
def test_it_drains_a_backlog_over_a_slow_link(smoke, bench_servers):
    """On the smoke runs' project (--project-url), on its database."""
    out = smoke.run(
        "drain.py", "--sales", "5", "--rtt-ms", "10", "--workers", "1", "--timeout", "120",
        "--project-url", bench_servers["project"],
        "--database-url", smoke.server, "--database", f"{smoke.prefix}_{RECEIPTS}", "--redis-url", smoke.redis_url,
        **bench_servers.env,
    )  # fmt: skip
    for line in (
        r"  queued 5 sales offline in [\d.]+ s",
        r"  round trip    10 ms added by the proxy \(half each way\)",
        r"  drained       5 queued sales in [\d.]+ s \(from the agent's start\)",
        r"  agent start   \d+ ms until /health answered",
        r"  agent memory  peak RSS [\d.]+ MiB while draining, [\d.]+ MiB after",
        r"  refused       \d+ calls answered 429 by a rate limit",
        r"  service       holds [\d,]+ receipts of bench-drain, [\d,]+ tokens: .+",
    ):
        assert re.search(f"^{line}$", out, re.M), f"no line {line!r}:\n{out}"
