"""The agents' timing lines (RECECO_AGENT_TIMINGS, receco_agent.timing) read into where a
POS answer's time went, phase by phase, and the drain's spans that can hold one back:
bench/reconnect.py's ``--timings``."""

import json
import statistics
from collections import Counter
from pathlib import Path


def read_timings(paths: list[Path]) -> list[dict]:
    """The lines the agents wrote with RECECO_AGENT_TIMINGS (receco_agent.timing)."""
    lines = []
    for path in paths:
        if path.exists():
            lines.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return lines


def pos_phases(lines: list[dict], samples: list[tuple[float, float, str]]) -> list[tuple[float, list[tuple]]]:
    """For each sale of ``samples`` ((sent, seconds, token) as the POS measured them) that the
    agent timed: (seconds to the answer, [(phase, wall, on CPU, waiting for a CPU), ...]).

    "connect" is from the POS's send until the agent accepted the connection, "reply" from
    the agent's last write until the POS had read the answer; the phases between are the
    agent's own (receco_agent.timing), each named for the point that ends it. Phases that
    span two threads (accepted to handler) or processes have None for CPU figures.
    """
    by_token = {line["token"]: line["points"] for line in lines if line.get("kind") == "pos" and line.get("token")}
    result = []
    for sent, elapsed, token in samples:
        points = by_token.get(token)
        if not points or points[0][0] != "accepted":
            continue
        rows = [("connect", points[0][1] - sent, None, None)]
        for before, after in zip(points, points[1:], strict=False):
            on_cpu = (after[2] - before[2]) / 1e9 if before[2] is not None else None
            waiting = (after[3] - before[3]) / 1e9 if before[3] is not None else None
            rows.append((after[0], after[1] - before[1], on_cpu, waiting))
        rows.append(("reply", sent + elapsed - points[-1][1], None, None))
        result.append((elapsed, rows))
    return result


def paths_of(timed: list[tuple[float, list[tuple]]]) -> list[str]:
    """Lines on the answers by the way they went: queued behind the backlog, or uploaded at
    once (the POS waits for the service's answer): how many, p50, p99 and the longest (ms)."""
    ways: dict[str, list[float]] = {}
    for elapsed, rows in timed:
        way = "uploaded at once" if any(row[0] == "service" for row in rows) else "queued"
        ways.setdefault(way, []).append(elapsed * 1000)
    lines = []
    for way, totals in sorted(ways.items()):
        totals.sort()
        p99 = totals[min(len(totals) - 1, int(len(totals) * 0.99))]
        lines.append(
            f"    {way:<17} {len(totals):>5} sales: p50 {statistics.median(totals):.1f} ms, p99 {p99:.1f} ms,"
            f" max {totals[-1]:.1f} ms"
        )
    return lines


def _ms(value: float | None, width: int) -> str:
    return f"{value:>{width}.1f}" if value is not None else " " * (width - 1) + "-"


def phase_table(timed: list[tuple[float, list[tuple]]]) -> list[str]:
    """Lines of a table of pos_phases(): each phase's p50 and p99 wall time, and in the slowest
    5% of answers its mean wall time split into on a CPU, waiting for a CPU (run queue) and
    asleep (a lock, the interpreter lock, the disk), in ms."""
    if not timed:
        return []
    paths = Counter(tuple(row[0] for row in rows) for _, rows in timed)
    names = list(paths.most_common(1)[0][0])
    timed = [sale for sale in timed if [row[0] for row in sale[1]] == names]  # the usual way only (paths_of)
    slow = sorted(timed, key=lambda sale: sale[0])[-max(1, len(timed) // 20) :]
    heads = f"{'wall':>6} {'on CPU':>6} {'run queue':>9} {'asleep':>6}"
    lines = [f"    {'phase':<16} {'p50':>6} {'p99':>6}   slowest 5%: {heads}"]
    for index, name in enumerate(names):
        walls = sorted(rows[index][1] * 1000 for _, rows in timed)
        p99 = walls[min(len(walls) - 1, int(len(walls) * 0.99))]
        mean = [
            statistics.mean(rows[index][k] for _, rows in slow) * 1000 if slow[0][1][index][k] is not None else None
            for k in (1, 2, 3)
        ]
        asleep = mean[0] - mean[1] - mean[2] if None not in mean else None
        lines.append(
            f"    {name:<16} {statistics.median(walls):>6.2f} {p99:>6.2f}   {'':11} {_ms(mean[0], 6)} {_ms(mean[1], 6)}"
            f" {_ms(mean[2], 9)} {_ms(asleep, 6)}"
        )
    return lines


def drain_spans(lines: list[dict]) -> list[str]:
    """Lines on the drain's spans that can hold a POS answer back: how many, their wall p50/p99 and CPU p99 (ms)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for line in lines:
        if line.get("kind") == "drain":
            wall = line["end"][1] - line["start"][1]
            spans.setdefault(line["name"], []).append((wall * 1000, (line["end"][2] - line["start"][2]) / 1e6))
    result = []
    for name, rows in spans.items():
        walls, cpus = sorted(r[0] for r in rows), sorted(r[1] for r in rows)
        p99 = min(len(rows) - 1, int(len(rows) * 0.99))
        result.append(
            f"    drain {name:<12} {len(rows):>6}: wall p50 {statistics.median(walls):.1f} ms, p99 {walls[p99]:.1f} ms;"
            f" on CPU p99 {cpus[p99]:.1f} ms"
        )
    return result
