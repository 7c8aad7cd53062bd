"""A city's tills reconnecting at once: many agents, each with a backlog, reach the service together.

    python bench/reconnect.py --merchants 10 --tills 5 --sales 200

Makes ``--merchants`` merchants with ``--tills`` tills each, every till an agent
(``receco-agent start``, posagent/) with a live key of its own (``--shared-keys``: one key
per merchant, which all its tills use) held to the service's default rate limits. Each
agent's queue holds ``--sales`` sales made while the service was unreachable (queued as
bench/drain.py queues them). The service runs as the image runs it (gunicorn.conf.py,
bench/connections.py's server: access log to a file, metrics on), on PostgreSQL. The
agents reach it through a gate that holds every connection until every agent's first
upload waits there (or 10 s after the first came: an agent waits 15 s for an answer), then
lets them through at the same moment. Meanwhile a POS rings up a sale every
``--pos-interval-ms`` on ``--pos-tills`` of the tills (bench/drain.py's POS), and their
answer times are the till's own.

It prints how long the whole backlog took to land (from the gate opening), the POS
answers' p50 and p99, what the service answered (by status, from its metrics: one count
per call of a batch; and from its access log: one per request), what the agents met
(uploads that did not go through, by cause), the agents' memory and CPU at idle, and
checks that every sale of every queue is in the database exactly once (counts and tokens).
"""

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.agents import DelayProxy, agent_env, backlog_done, health, queue_sales, rss_kib, run_pos  # noqa: E402
from bench.servers import (  # noqa: E402
    IMAGE_WORKER_CLASS,
    LIMIT_ENV,
    PYTHON,
    ROOT,
    Config,
    answers_by_status,
    create_database,
    database_url,
    free_port,
    load_average,
    manage,
    project_env,
    refused_calls,
    serve_image,
    status_text,
    stop,
    wait_until_up,
)
from bench.timings import drain_spans, paths_of, phase_table, pos_phases, read_timings  # noqa: E402

PREFIX = "bench-city"
LANDED_GOAL_S = 60
HOLD_SECONDS = 10
POS_P99_GOAL_MS = 20
# The agents' log lines of an upload that did not go through, and why.
_NOT_THROUGH = re.compile(r"did not go through: (.*)$")
# Made in one process (a manage.py command per key would take minutes): prints
# "merchant till key" per till.
_KEYS_SCRIPT = """
from django.core.management import call_command
from merchants.keys import issue_key
from merchants.models import Merchant
merchants, tills, shared = {merchants}, {tills}, {shared}
for m in range(merchants):
    string_id = f"{prefix}-{{m:02d}}"
    if not Merchant.objects.filter(string_id=string_id).exists():
        call_command("createmerchant", string_id, name=f"City shop {{m}}")
    merchant = Merchant.objects.get(string_id=string_id)
    key = None
    for t in range(tills):
        if key is None or not shared:
            key = issue_key(merchant, "live", f"Till {{t + 1}}").key
        print("KEY", string_id, t, key)
"""


@dataclass
class Till:
    merchant: str
    number: int
    key: str
    home: Path
    port: int = 0
    process: subprocess.Popen | None = None
    log: Path | None = None
    log_offset: int = 0  # where the log stood when the gate opened


def main() -> None:
    args = _arguments()
    url = database_url(args.database_url, args.database)
    print(_header(args), flush=True)
    with tempfile.TemporaryDirectory(prefix="receco-reconnect-") as tmp:
        workdir = Path(tmp)
        env = _prepare(args, url)
        tills = _make_tills(args, env, workdir)
        started = time.monotonic()
        # The queues side by side: each sale is a commit of its own, which waits for the disk.
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda till: queue_sales(till.home, args.sales, till.key, till.merchant), tills))
        total = args.sales * len(tills)
        print(f"  queued        {total:,} sales offline in {time.monotonic() - started:.1f} s", flush=True)
        (workdir / "metrics").mkdir()
        env = dict(env, RECECO_METRICS="true", PROMETHEUS_MULTIPROC_DIR=str(workdir / "metrics"))
        server = serve_image(Config(args.workers, args.worker_class), args.port, env, workdir)
        gate = GateProxy(args.port)
        try:
            wait_until_up(server)
            gate.start()
            report = _reconnect(args, tills, gate, workdir)
            report["calls"] = _calls_by_status(args.port)
            report["refused"] = refused_calls(args.port)
        finally:
            for till in tills:
                if till.process and till.process.poll() is None:
                    till.process.terminate()
            for till in tills:
                if till.process:
                    till.process.wait(30)
            gate.stop()
            stop(server)
        report["requests"] = answers_by_status(server)
        report["agents"] = _not_through(tills)
        report["service"] = _exactly_once(url, tills)
        _print(args, report, total)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--merchants", type=int, default=10)
    parser.add_argument("--tills", type=int, default=5, help="tills (agents) per merchant")
    parser.add_argument("--sales", type=int, default=200, help="sales queued in each till before the start")
    parser.add_argument("--shared-keys", action="store_true", help="one live key per merchant, used by all its tills")
    parser.add_argument("--pos-tills", type=int, default=5, help="tills whose POS rings up sales meanwhile")
    parser.add_argument("--pos-interval-ms", type=float, default=100, help="a POS sale every N ms on each of them")
    parser.add_argument(
        "--nice",
        type=int,
        default=5,
        help="niceness of the tills without a POS measured: each till is a machine of its own, and the others"
        " should take less of its CPU than they would (0: all equal)",
    )
    parser.add_argument(
        "--pos-nice",
        type=int,
        default=-10,
        help="niceness of the measured tills and their POS (negative: root only): each is a machine of its own,"
        " where the service, PostgreSQL and 45 other tills take none of its CPU (0: equal to the service's, as"
        " measured before 2026-11-26 14:00 UTC)",
    )
    parser.add_argument(
        "--settle-seconds", type=float, default=2, help="once every backlog landed, the agents settle this long"
    )
    parser.add_argument("--idle-seconds", type=float, default=10, help="how long the agents' idle CPU is measured")
    parser.add_argument(
        "--idle-pos-seconds",
        type=float,
        default=5,
        help="then the same POS rings up this long on the same tills, the crowd idle: the answers without the crowd",
    )
    parser.add_argument(
        "--timings",
        action="store_true",
        help="the measured tills record where each POS answer's time goes (RECECO_AGENT_TIMINGS); print it by phase",
    )
    parser.add_argument("--timeout", type=float, default=600, help="give up when the backlog takes longer (seconds)")
    parser.add_argument("--workers", type=int, default=5, help="gunicorn workers")
    parser.add_argument("--worker-class", default=IMAGE_WORKER_CLASS)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/"),
        help="PostgreSQL server (its database name is replaced by --database)",
    )
    parser.add_argument("--database", default="receco_bench_reconnect")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6"))
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (default: a free one)")
    args = parser.parse_args()
    args.port = args.port or free_port()
    return args


def _header(args) -> str:
    keys = "one live key per merchant, shared by its tills" if args.shared_keys else "a live key per till"
    return "\n".join(
        [
            "A city's tills reconnecting at once",
            f"  date          {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {os.cpu_count()} cores",
            f"  tills         {args.merchants} merchants x {args.tills} tills, {keys}, default rate limits;"
            f" {args.sales} sales queued in each",
            f"  service       gunicorn.conf.py, {args.workers} {args.worker_class.rsplit('.', 1)[-1]} workers",
            f"  POS           a sale every {args.pos_interval_ms:g} ms on {args.pos_tills} tills while it lands;"
            f" those tills and their POS at nice {args.pos_nice}, the other tills at nice {args.nice}",
            f"  load average  {load_average()} at the start",
        ]
    )


# -- preparing ---------------------------------------------------------------------------


def _prepare(args, url: str) -> dict:
    create_database(url)
    env = project_env(args, url, f"http://127.0.0.1:{args.port}")
    for limit in LIMIT_ENV:  # the service's defaults, as a city's tills meet them
        env.pop(limit)
    manage(env, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(url, autocommit=True) as connection:
        merchants = "SELECT id FROM merchants_merchant WHERE string_id LIKE %s"
        pattern = f"{PREFIX}-%"
        if connection.execute("SELECT to_regclass('receipts_setaside')").fetchone()[0]:
            connection.execute(
                f"DELETE FROM receipts_setaside WHERE receipt_id IN (SELECT id FROM receipts_receipt"
                f" WHERE merchant_id IN ({merchants}))",
                (pattern,),
            )
        connection.execute(f"DELETE FROM receipts_receipt WHERE merchant_id IN ({merchants})", (pattern,))
    return env


def _make_tills(args, env: dict, workdir: Path) -> list[Till]:
    script = _KEYS_SCRIPT.format(merchants=args.merchants, tills=args.tills, shared=args.shared_keys, prefix=PREFIX)
    output = manage(env, "shell", "-c", script)
    tills = []
    for line in output.splitlines():
        if line.startswith("KEY "):
            _, merchant, number, key = line.split()
            tills.append(Till(merchant, int(number), key, workdir / f"{merchant}-till{number}"))
    return tills


# -- the moment --------------------------------------------------------------------------


class GateProxy(DelayProxy):
    """A TCP proxy to 127.0.0.1:<target> that holds every connection until open() is
    called, then lets them all through at once (no delay of its own)."""

    def __init__(self, target: int):
        super().__init__(target, 0.0)
        self._open: asyncio.Event | None = None
        self.held = 0  # connections that waited at the gate
        self.first_held: float | None = None  # when the first one came (monotonic)

    def _run(self) -> None:
        self._open = asyncio.Event()
        super()._run()

    def open(self) -> None:
        self._loop.call_soon_threadsafe(self._open.set)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._open.is_set():
            self.held += 1
            self.first_held = self.first_held or time.monotonic()
            await self._open.wait()
        await super()._connection(reader, writer)


def _wait_for_health(till: Till, started: float, timeout: float) -> None:
    while health(till.port) is None:
        if till.process.poll() is not None:
            sys.exit(f"an agent exited:\n{till.log.read_text()}")
        if time.monotonic() - started > timeout:
            sys.exit("the agents did not start in time")
        time.sleep(0.05)


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _reconnect(args, tills: list[Till], gate: GateProxy, workdir: Path) -> dict:
    """Start every agent, open the gate once all are up, and wait for every backlog."""
    started = time.monotonic()
    # One POS per merchant, as far as they go: each rings up on a till of its own.
    pos_tills = sorted(tills, key=lambda till: (till.number, till.merchant))[: args.pos_tills]
    for till in tills:
        nice = args.pos_nice if till in pos_tills else args.nice
        till.port = free_port()
        till.log = workdir / f"{till.home.name}.log"
        env = agent_env(till.home, till.key, gate.port, till.port, till.merchant)
        if args.timings and till in pos_tills:
            env["RECECO_AGENT_TIMINGS"] = str(workdir / f"{till.home.name}.timings")
        with till.log.open("wb") as log:
            till.process = subprocess.Popen(
                [PYTHON, "-m", "receco_agent", "start"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=ROOT,
                preexec_fn=(lambda nice=nice: _renice(nice)) if nice else None,
            )
    for till in pos_tills:
        _wait_for_health(till, started, args.timeout)
    done, answers, pos = _ring_up(args, pos_tills)
    # Every agent's first upload waits at the gate; the agents wait for it 15 s, so the
    # gate opens once all of them are there, or HOLD_SECONDS after the first came (an agent
    # that starts later goes through at once).
    while gate.held < len(tills) and not (gate.first_held and time.monotonic() - gate.first_held > HOLD_SECONDS):
        time.sleep(0.05)
    peak_rss = 0
    for till in tills:
        till.log_offset = till.log.stat().st_size
    gate.open()
    opened = time.monotonic()
    held = gate.held
    for till in tills:
        _wait_for_health(till, started, args.timeout)
    up = time.monotonic() - started
    try:
        waiting = list(tills)
        while waiting:
            peak_rss = max(peak_rss, max(rss_kib(till.process.pid) for till in tills))
            waiting = [till for till in waiting if backlog_done(till.home, args.sales) < args.sales]
            if time.monotonic() - opened > args.timeout:
                left = sum(args.sales - backlog_done(till.home, args.sales) for till in waiting)
                for till in waiting:  # what they met, for the one who reads this
                    tail = till.log.read_bytes()[-3000:].decode(errors="replace")
                    print(f"--- {till.home.name} (health {health(till.port)}):\n{tail}", file=sys.stderr)
                sys.exit(f"{len(waiting)} backlogs ({left:,} sales) did not land within {args.timeout:g} s")
            time.sleep(0.25)
        landed = time.monotonic() - opened
    finally:
        samples = _rung_up(done, answers, pos)
    # The POS sales rung up meanwhile go up too; then the agents idle.
    deadline = time.monotonic() + 120
    while any((health(till.port) or {}).get("pending") for till in tills) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(args.settle_seconds)
    before = {till.home: _cpu_ticks(till.process.pid) for till in tills}
    time.sleep(args.idle_seconds)
    ticks = os.sysconf("SC_CLK_TCK")
    idle_cpu = [(_cpu_ticks(till.process.pid) - before[till.home]) / ticks / args.idle_seconds * 100 for till in tills]
    idle_rss = [rss_kib(till.process.pid) / 1024 for till in tills]
    # The same POS on the same tills with the crowd idle: the same machine, in the same run.
    done, answers, pos = _ring_up(args, pos_tills)
    time.sleep(args.idle_pos_seconds)
    idle_samples = _rung_up(done, answers, pos)
    timings = read_timings([workdir / f"{till.home.name}.timings" for till in pos_tills]) if args.timings else []
    return {
        "up": up,
        "held": held,
        "landed": landed,
        "pos_ms": sorted(elapsed * 1000 for _, elapsed, _ in samples),
        "idle_pos_ms": sorted(elapsed * 1000 for _, elapsed, _ in idle_samples),
        "phases": pos_phases(timings, samples),
        "idle_phases": pos_phases(timings, idle_samples),
        "spans": drain_spans(timings),
        "peak_rss_mib": peak_rss / 1024,
        "idle_rss_mib": statistics.mean(idle_rss),
        "idle_cpu_percent": statistics.mean(idle_cpu),
        "idle_cpu_max_percent": max(idle_cpu),
        "load": load_average(),
    }


def _renice(nice: int) -> None:
    """Add ``nice`` to this process's niceness (a negative one only as root: else left as it is)."""
    with contextlib.suppress(PermissionError):
        os.nice(nice)


def _niced_pos(nice: int, *args) -> None:
    """The POS of bench/drain.py (bench/agents.py's run_pos), at the niceness of the till it rings up on."""
    _renice(nice)
    run_pos(*args)


def _ring_up(args, pos_tills: list[Till]) -> tuple:
    """Start a POS process per till of ``pos_tills``, each ringing up a sale every --pos-interval-ms."""
    processes = multiprocessing.get_context("spawn")
    done, answers = processes.Event(), processes.Queue()
    interval = args.pos_interval_ms / 1000
    pos = [
        processes.Process(target=_niced_pos, args=(args.pos_nice, till.port, interval, done, answers, till.merchant))
        for till in pos_tills
    ]
    for process in pos:
        process.start()
    return done, answers, pos


def _rung_up(done, answers, pos: list) -> list[tuple[float, float, str]]:
    """Stop the POS processes of _ring_up; return their (sent, seconds, token) samples."""
    done.set()
    samples = [sample for _ in pos for sample in answers.get(timeout=60)]
    for process in pos:
        process.join(60)
    return samples


# -- what happened -----------------------------------------------------------------------


def _calls_by_status(port: int) -> Counter:
    """The service's answers by status (receco_requests_total: one per HTTP request)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    found = Counter()
    for line in text.splitlines():
        if line.startswith("receco_requests_total{"):
            status = re.search(r'status="(\d+)"', line)
            if status:
                found[int(status.group(1))] += round(float(line.split()[-1]))
    return found


def not_through_causes(lines: list[str]) -> Counter:
    """The causes of the agents' "did not go through" log lines: the HTTP status the service
    answered, or how the connection failed."""
    causes = Counter()
    for line in lines:
        match = _NOT_THROUGH.search(line)
        if not match:
            continue
        message = match.group(1)
        # The agent logs the service's message (receco_agent.client), or its own for a
        # connection that failed and an answer without the service's envelope.
        status = re.search(r"\bHTTP (\d{3})\b", message)
        if message.startswith("Rate limit exceeded") or message.startswith("Too many"):
            causes["429"] += 1
        elif message.startswith(("The database is not answering", "The service is busy")):
            causes["503"] += 1
        elif status:
            causes[status.group(1)] += 1
        elif message.startswith("no answer from"):
            causes["timeout"] += 1
        elif message.startswith(("cannot reach", "connection to")):
            causes["connection failed"] += 1
        else:
            causes[message[:60]] += 1
    return causes


def _not_through(tills: list[Till]) -> Counter:
    # From the gate's opening: before it, the agents' first uploads waited at the gate.
    lines = [
        line
        for till in tills
        for line in till.log.read_bytes()[till.log_offset :].decode(errors="replace").splitlines()
    ]
    return not_through_causes(lines)


def _queued(home: Path) -> list[tuple[str, str]]:
    """(token, state) of every row of the agent's queue."""
    connection = sqlite3.connect(f"file:{home / 'queue.sqlite3'}?mode=ro", uri=True, timeout=10)
    try:
        return connection.execute("SELECT token, state FROM outbox").fetchall()
    finally:
        connection.close()


def _exactly_once(url: str, tills: list[Till]) -> dict:
    """Every confirmed sale of every queue against the service's receipts of the merchants."""
    rows = [row for till in tills for row in _queued(till.home)]
    queued = Counter(token for token, state in rows if state == "done")
    left = sum(1 for _, state in rows if state != "done")
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT r.token FROM receipts_receipt r JOIN merchants_merchant m ON m.id = r.merchant_id"
            " WHERE m.string_id LIKE %s",
            (f"{PREFIX}-%",),
        ).fetchall()
    stored = Counter(token for (token,) in rows)
    return {
        "queued": sum(queued.values()),
        "stored": sum(stored.values()),
        "twice": sum(1 for count in stored.values() if count > 1),
        "missing": len(set(queued) - set(stored)),
        "unknown": len(set(stored) - set(queued)),
        "left": left,
    }


def verdicts(report: dict, total: int) -> list[tuple[bool, str]]:
    """(met, text) for each goal."""
    service, pos = report["service"], report["pos_ms"]
    failures = {status: count for status, count in report["requests"].items() if status >= 500 and status != 503}
    failures.update({status: count for status, count in report["calls"].items() if status >= 500 and status != 503})
    broken = {cause: count for cause, count in report["agents"].items() if cause in ("connection failed", "timeout")}
    p99 = _percentile(pos, 99)
    return [
        (
            service["stored"] == service["queued"] >= total
            and not (service["twice"] or service["missing"] or service["unknown"] or service["left"]),
            f"exactly once: {service['queued']:,} sales confirmed in the queues ({service['left']} not),"
            f" {service['stored']:,} receipts stored, {service['twice']} twice, {service['missing']} missing,"
            f" {service['unknown']} unknown",
        ),
        (report["landed"] < LANDED_GOAL_S, f"the backlog of {total:,} landed in {report['landed']:.1f} s (< 60 s)"),
        (
            bool(pos) and p99 < POS_P99_GOAL_MS,
            f"POS answers p99 {p99:.1f} ms (< {POS_P99_GOAL_MS} ms)" if pos else "POS answers: no POS sale in the run",
        ),
        (not failures, f"the service failed no request but with 503: {failures or 'none'} other 5xx"),
        (not broken, f"no connection failed or timed out: {broken or 'none'}"),
    ]


def _percentile(values: list[float], percent: float) -> float:
    return values[min(len(values) - 1, int(len(values) * percent / 100))] if values else 0.0


def _print(args, report: dict, total: int) -> None:
    pos = report["pos_ms"]
    print(
        f"  agents up     {args.merchants * args.tills} agents answered /health {report['up']:.1f} s after the first"
        f" started; {report['held']} of their first uploads waited at the gate until it opened"
    )
    print(f"  landed        {total:,} queued sales in {report['landed']:.1f} s from the gate opening")
    if pos:
        print(
            f"  POS answers   {len(pos)} sales on {args.pos_tills} tills meanwhile:"
            f" p50 {statistics.median(pos):.1f} ms,"
            f" p99 {_percentile(pos, 99):.1f} ms, max {pos[-1]:.1f} ms"
        )
    idle = report.get("idle_pos_ms")
    if idle:
        print(
            f"  POS at idle   {len(idle)} sales on the same tills after, the crowd idle:"
            f" p50 {statistics.median(idle):.1f} ms, p99 {_percentile(idle, 99):.1f} ms, max {idle[-1]:.1f} ms"
        )
    for title, key in (("while the backlog landed", "phases"), ("the crowd idle", "idle_phases")):
        if report.get(key):
            print(f"  POS phases    {title} (ms; RECECO_AGENT_TIMINGS)")
            print("\n".join(paths_of(report[key]) + phase_table(report[key])))
    if report.get("spans"):
        print("\n".join(report["spans"]))
    print(f"  service       {status_text(report['calls'])} (its metrics, by request; start-up probe: a 200)")
    print(f"  refused       {report['refused']:,} calls with 429 (receco_rate_limit_refusals_total)")
    shed = "503: shed, from the error log"
    print(f"  requests      {status_text(report['requests'])} (access log: each HTTP request; {shed})")
    agents = ", ".join(f"{cause}: {count}" for cause, count in report["agents"].most_common()) or "none"
    print(f"  not through   {agents} (agents' logs: uploads that did not go through, by cause)")
    print(
        f"  agent memory  peak RSS {report['peak_rss_mib']:.1f} MiB while draining (the largest agent),"
        f" {report['idle_rss_mib']:.1f} MiB at idle (mean)"
    )
    print(
        f"  agent CPU     {report['idle_cpu_percent']:.2f}% of a core at idle (mean over {args.idle_seconds:g} s,"
        f" largest {report['idle_cpu_max_percent']:.2f}%)"
    )
    print(f"  load average  {report['load']} when the backlog had landed, {load_average()} at the end\n\nGoals")
    for ok, text in verdicts(report, total):
        print(f"  {'met   ' if ok else 'MISSED'} {text}")


if __name__ == "__main__":
    main()
