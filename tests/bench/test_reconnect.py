"""The reconnecting tills' benchmark (bench/reconnect.py): what the agents met is read from
their logs by cause, and every goal is judged on what was counted."""

from collections import Counter

from bench import drain, reconnect

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


def test_a_500_a_reset_or_a_sale_stored_twice_is_a_miss():
    service = {"queued": 10_000, "stored": 10_001, "twice": 1, "missing": 0, "unknown": 0, "left": 0}
    verdicts = reconnect.verdicts(
        _report(service=service, calls=Counter({200: 10_000, 500: 1}), agents=Counter({"connection failed": 3})),
        10_000,
    )
    assert [met for met, _ in verdicts] == [False, True, False, False, False]
    assert verdicts[3][1] == "the service failed no request but with 503: {500: 1} other 5xx"
    assert verdicts[4][1] == "no connection failed or timed out: {'connection failed': 3}"


def _timed_line(token, accepted, steps):
    """A timing line (receco_agent.timing) of a sale accepted at ``accepted``: (name, seconds
    after the last point, ns on a CPU, ns in the run queue) per phase from the handler on."""
    points, moment, on_cpu, waiting = [["accepted", accepted, None, None]], accepted, 0, 0
    for name, seconds, cpu, queue in steps:
        moment, on_cpu, waiting = moment + seconds, on_cpu + cpu, waiting + queue
        points.append([name, moment, on_cpu, waiting])
    return {"kind": "pos", "token": token, "points": points}


def test_a_pos_answer_is_split_into_the_agents_phases_and_the_posts_own():
    line = _timed_line("rcpt_a", 100.002, [("thread", 0.001, 0, 0), ("queue committed", 0.010, 1_000_000, 4_000_000)])
    [(elapsed, rows)] = drain.pos_phases([line, {"kind": "drain", "name": "settle"}], [(100.0, 0.015, "rcpt_a")])
    assert elapsed == 0.015
    assert [row[0] for row in rows] == ["connect", "thread", "queue committed", "reply"]
    assert [round(row[1] * 1000, 3) for row in rows] == [2.0, 1.0, 10.0, 2.0]
    assert rows[0][2:] == (None, None)  # the connection's accept was another thread's
    assert rows[2][2:] == (0.001, 0.004)  # on a CPU, in the run queue
    # A sale the agent did not time (another till, or no RECECO_AGENT_TIMINGS) is left out.
    assert drain.pos_phases([line], [(100.0, 0.015, "rcpt_b")]) == []


def test_the_phase_table_splits_the_slowest_answers_wall_time():
    lines, samples = [], []
    for number in range(20):
        slow = number == 19
        commit = (0.050 if slow else 0.002, 1_000_000, 45_000_000 if slow else 0)
        lines.append(
            _timed_line(f"rcpt_{number}", 10.0 + number, [("thread", 0.0, 0, 0), ("queue committed", *commit)])
        )
        samples.append((10.0 + number, 0.051 if slow else 0.003, f"rcpt_{number}"))
    table = drain.phase_table(drain.pos_phases(lines, samples))
    assert table[0].split() == ["phase", "p50", "p99", "slowest", "5%:", "wall", "on", "CPU", "run", "queue", "asleep"]
    # The slowest 5% (1 of 20): its commit's 50 ms are 1 ms on a CPU, 45 ms waiting for one, 4 ms asleep.
    assert table[3].split() == ["queue", "committed", "2.00", "50.00", "50.0", "1.0", "45.0", "4.0"]
    assert table[1].split()[-3:] == ["-", "-", "-"]  # connect: no thread's figures


def test_answers_are_told_apart_by_the_way_they_went():
    queued = [("thread", 0.0, 0, 0), ("queue committed", 0.002, 0, 0), ("stored", 0.0, 0, 0)]
    at_once = [*queued, ("service", 5.0, 0, 0)]
    lines = [
        _timed_line("rcpt_q1", 1.0, queued),
        _timed_line("rcpt_q2", 2.0, queued),
        _timed_line("rcpt_o", 3.0, at_once),
    ]
    samples = [(1.0, 0.003, "rcpt_q1"), (2.0, 0.004, "rcpt_q2"), (3.0, 5.003, "rcpt_o")]
    timed = drain.pos_phases(lines, samples)
    assert [line.split() for line in drain.paths_of(timed)] == [
        ["queued", "2", "sales:", "p50", "3.5", "ms,", "p99", "4.0", "ms,", "max", "4.0", "ms"],
        [
            "uploaded",
            "at",
            "once",
            "1",
            "sales:",
            "p50",
            "5003.0",
            "ms,",
            "p99",
            "5003.0",
            "ms,",
            "max",
            "5003.0",
            "ms",
        ],
    ]
    # The table is of the usual way (the queued sales here), whichever came first.
    table = drain.phase_table(timed[::-1])
    assert [line.split()[0] for line in table[1:]] == ["connect", "thread", "queue", "stored", "reply"]
