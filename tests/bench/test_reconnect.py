"""The reconnecting tills' benchmark (bench/reconnect.py): what the agents met is read from
their logs by cause, every goal is judged on what was counted, and the script runs as the
docs run it."""

import re
from collections import Counter

import pytest

from bench import reconnect

LOG = [
    "2026-11-26 10:30:01 WARNING receco_agent.agent: Upload of 50 sale(s) did not go through: The database is not"
    " answering; try again in a few seconds",
    "2026-11-26 10:30:01 WARNING receco_agent.agent: Upload of 50 sale(s) did not go through: The service is busy;"
    " try again in a few seconds",
    "2026-11-26 10:30:01 WARNING receco_agent.agent: Upload of 1 sale(s) did not go through: no answer from"
    " http://127.0.0.1:9/api/trpc/createReceiptFromPOS within 15 s",
    "2026-11-26 10:30:02 WARNING receco_agent.agent: Upload of 1 sale(s) did not go through: cannot reach"
    " http://127.0.0.1:9/api/trpc/createReceiptFromPOS: Connection refused",
    "2026-11-26 10:30:03 WARNING receco_agent.agent: Upload of receipt rcpt_x did not go through: Rate limit"
    " exceeded: at most 100 per second for this API key",
    "2026-11-26 10:30:03 WARNING receco_agent.agent: Upload of 4 sale(s) did not go through: http://127.0.0.1:9/api"
    " answered HTTP 502 without a Receco error body; check rececoApiUrl",
    "2026-11-26 10:30:04 WARNING receco_agent.forwarder: Queue paused: 1 failure(s) in a row, next try in 1.4 s",
]


def test_uploads_that_did_not_go_through_are_counted_by_cause():
    assert reconnect.not_through_causes(LOG) == Counter(
        {"503": 2, "429": 1, "502": 1, "timeout": 1, "connection failed": 1}
    )


def _report(**changes):
    report = {
        "service": {"queued": 10_000, "stored": 10_000, "twice": 0, "missing": 0, "unknown": 0, "left": 0},
        "pos_ms": [4.0] * 99 + [30.0],
        "requests": Counter({200: 300, 503: 2}),
        "calls": Counter({200: 10_000, 429: 40}),
        "agents": Counter({"429": 40, "503": 2}),
        "landed": 41.5,
    }
    report.update(changes)
    return report


def test_a_run_that_lands_everything_once_in_time_meets_every_goal_but_a_slow_pos():
    assert reconnect.verdicts(_report(), 10_000) == [
        (
            True,
            "exactly once: 10,000 sales confirmed in the queues (0 not), 10,000 receipts stored, 0 twice, 0 missing,"
            " 0 unknown",
        ),
        (True, "the backlog of 10,000 landed in 41.5 s (< 60 s)"),
        (False, "POS answers p99 30.0 ms (< 20 ms)"),
        (True, "the service failed no request but with 503: none other 5xx"),
        (True, "no connection failed or timed out: none"),
    ]


def test_a_run_without_a_pos_sale_says_so_and_misses_the_pos_goal():
    verdicts = reconnect.verdicts(_report(pos_ms=[]), 10_000)
    assert verdicts[2] == (False, "POS answers: no POS sale in the run")


def test_a_500_a_reset_or_a_sale_stored_twice_is_a_miss():
    service = {"queued": 10_000, "stored": 10_001, "twice": 1, "missing": 0, "unknown": 0, "left": 0}
    verdicts = reconnect.verdicts(
        _report(service=service, calls=Counter({200: 10_000, 500: 1}), agents=Counter({"connection failed": 3})),
        10_000,
    )
    assert [met for met, _ in verdicts] == [False, True, False, False, False]
    assert verdicts[3][1] == "the service failed no request but with 503: {500: 1} other 5xx"
    assert verdicts[4][1] == "no connection failed or timed out: {'connection failed': 3}"


@pytest.mark.postgres
def test_a_few_tills_reconnect_and_every_line_of_figures_is_printed(smoke):
    """As docs/benchmarks.md runs it, at its smallest: two tills of one merchant, one with a POS."""
    out = smoke.run(
        "reconnect.py", "--merchants", "1", "--tills", "2", "--sales", "5", "--pos-tills", "1",
        "--settle-seconds", "0", "--idle-seconds", "0.2", "--idle-pos-seconds", "0.2",
        "--workers", "1", "--nice", "0", "--pos-nice", "0",
        "--database-url", smoke.server, "--database", f"{smoke.prefix}_reconnect", "--redis-url", smoke.redis_url,
    )  # fmt: skip
    assert out.startswith("A city's tills reconnecting at once\n")
    for line in (
        r"  queued        10 sales offline in [\d.]+ s",
        r"  agents up     2 agents answered /health [\d.]+ s after the first started; \d+ of their first uploads .+",
        r"  landed        10 queued sales in [\d.]+ s from the gate opening",
        r"  service       (\d+: [\d,]+(; )?)+ \(its metrics, by request; .+",
        r"  refused       [\d,]+ calls with 429 \(receco_rate_limit_refusals_total\)",
        r"  requests      (\d+: [\d,]+(; )?)+ \(access log: .+",
        r"  not through   .+ \(agents' logs: uploads that did not go through, by cause\)",
        r"  agent memory  peak RSS [\d.]+ MiB while draining .+",
        r"  agent CPU     [\d.]+% of a core at idle .+",
        r"  (met   |MISSED) exactly once: .+",
    ):
        assert re.search(f"^{line}$", out, re.M), f"no line {line!r}:\n{out}"
