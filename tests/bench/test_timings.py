"""Where a POS answer's time went (bench/timings.py): the agents' timing lines split each
answer into its phases, the slowest answers' wall time into CPU, run queue and sleep."""

from bench import timings


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
    [(elapsed, rows)] = timings.pos_phases([line, {"kind": "drain", "name": "settle"}], [(100.0, 0.015, "rcpt_a")])
    assert elapsed == 0.015
    assert [row[0] for row in rows] == ["connect", "thread", "queue committed", "reply"]
    assert [round(row[1] * 1000, 3) for row in rows] == [2.0, 1.0, 10.0, 2.0]
    assert rows[0][2:] == (None, None)  # the connection's accept was another thread's
    assert rows[2][2:] == (0.001, 0.004)  # on a CPU, in the run queue
    # A sale the agent did not time (another till, or no RECECO_AGENT_TIMINGS) is left out.
    assert timings.pos_phases([line], [(100.0, 0.015, "rcpt_b")]) == []


def test_the_phase_table_splits_the_slowest_answers_wall_time():
    lines, samples = [], []
    for number in range(20):
        slow = number == 19
        commit = (0.050 if slow else 0.002, 1_000_000, 45_000_000 if slow else 0)
        lines.append(
            _timed_line(f"rcpt_{number}", 10.0 + number, [("thread", 0.0, 0, 0), ("queue committed", *commit)])
        )
        samples.append((10.0 + number, 0.051 if slow else 0.003, f"rcpt_{number}"))
    table = timings.phase_table(timings.pos_phases(lines, samples))
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
    timed = timings.pos_phases(lines, samples)
    assert [line.split() for line in timings.paths_of(timed)] == [
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
    table = timings.phase_table(timed[::-1])
    assert [line.split()[0] for line in table[1:]] == ["connect", "thread", "queue", "stored", "reply"]
