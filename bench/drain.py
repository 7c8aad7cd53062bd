"""The agent's drain benchmark: a day's backlog uploaded over a slow link.

    python bench/drain.py --sales 5000 --rtt-ms 150

Queues N sales in a fresh agent home while the service is unreachable, serves the project
with gunicorn on PostgreSQL (as bench/run.py does) behind a small TCP proxy that delays
every chunk by half the round trip each way (and a new connection by a round trip, as a
TCP handshake would), starts ``receco-agent start`` through the proxy and prints how long
the queue took to drain, the agent's answer times to POS sales sent while it drained
(p50, p99), its resident memory (peak while draining) and its start-up time. At the end it
checks that the service holds every sale exactly once.

The service's rate limits are raised out of the way unless ``--default-limits`` is given:

    python bench/drain.py --sales 3000 --default-limits --pos-interval-ms 0

then the live key is held to the service's defaults (RECECO_RATELIMIT_LIVE_KEY), and the
calls the service refused with 429 are read from its metrics (/metrics) and printed.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The checkout's agent, not the one installed in the environment (an editable install may
# point at another checkout): for the agents started here and the queues made in-process.
AGENT_SRC = Path(__file__).resolve().parent.parent / "posagent" / "src"
sys.path.insert(0, str(AGENT_SRC))

from bench.run import (  # noqa: E402
    LIMIT_ENV,
    PYTHON,
    ROOT,
    _database_url,
    _manage,
    _project_env,
    _serve,
    _stop,
    _wait_until_up,
)

MERCHANT = "bench-drain"


def main() -> None:
    args = _arguments()
    url = _database_url(args.database_url, args.database)
    env = _prepare(args, url)
    key = _manage(env, "createapikey", MERCHANT, "--type", "live").strip().splitlines()[-1].strip()
    print(f"  load average  {_load()} at the start", flush=True)
    with tempfile.TemporaryDirectory(prefix="receco-drain-") as tmp:
        workdir = Path(tmp)
        home = workdir / "agent"
        started = time.monotonic()
        _queue_sales(home, args.sales, key)
        print(f"  queued {args.sales:,} sales offline in {time.monotonic() - started:.1f} s", flush=True)
        # Metrics on, to count the calls refused by a rate limit (each worker writes its
        # values here; a scrape adds them up).
        (workdir / "metrics").mkdir()
        env = dict(env, RECECO_METRICS="true", PROMETHEUS_MULTIPROC_DIR=str(workdir / "metrics"))
        server = _serve(args, "receco.wsgi:application", args.port, env, workdir / "gunicorn.log")
        proxy = DelayProxy(args.port, args.rtt_ms / 2000)
        try:
            _wait_until_up(server)
            proxy.start()
            _run_agent(args, home, key, proxy.port, workdir)
            refused = _refused_calls(args.port)
        finally:
            proxy.stop()
            _stop(server)
    print(f"  refused       {refused:,} calls answered 429 by a rate limit")
    print(f"  load average  {_load()} at the end")
    _check_exactly_once(url, args.sales)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _refused_calls(port: int) -> int:
    """The calls the service refused with 429 (receco_rate_limit_refusals, all limits), from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    counts = [line.split()[-1] for line in text.splitlines() if line.startswith("receco_rate_limit_refusals_total")]
    return round(sum(map(float, counts)))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sales", type=int, default=5000, help="sales queued before the agent starts")
    parser.add_argument("--rtt-ms", type=float, default=150, help="round trip the proxy adds (half each way)")
    parser.add_argument(
        "--pos-interval-ms", type=float, default=100, help="a POS sale every N ms while draining (0: none)"
    )
    parser.add_argument(
        "--default-limits", action="store_true", help="hold the live key to the service's default rate limits"
    )
    parser.add_argument("--timeout", type=float, default=900, help="give up when the drain takes longer (seconds)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument("--worker-class", default="sync")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/"),
        help="PostgreSQL server (its database name is replaced by --database)",
    )
    parser.add_argument("--database", default="receco_bench_drain")
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6"))
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (default: a free one)")
    args = parser.parse_args()
    args.port = args.port or _free_port()
    return args


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _prepare(args, url: str) -> dict:
    name = args.database
    with psycopg.connect(_database_url(args.database_url, "postgres"), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    env = _project_env(args, url, f"http://127.0.0.1:{args.port}")
    if args.default_limits:
        for name in LIMIT_ENV:
            env.pop(name)
    _manage(env, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(url, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM merchants_merchant WHERE string_id = %s", (MERCHANT,)).fetchone():
            _manage(env, "createmerchant", MERCHANT, "--name", "Bench Drain")
        connection.execute(
            "DELETE FROM receipts_receipt WHERE merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
            (MERCHANT,),
        )
    return env


def _sale(number: int, merchant: str = MERCHANT) -> dict:
    return {
        "merchantId": merchant,
        "merchantName": "Bench Drain",
        "currency": "NGN",
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unitPrice": 150000, "totalPrice": 300000, "sku": "JR-1"},
            {"name": "Zobo", "quantity": 1, "unitPrice": 50000, "totalPrice": 50000},
        ],
        "totalAmount": 350000,
        "paymentMethod": "card",
        "location": "Lekki",
        "cashierId": "c-7",
        "terminalId": f"till-{number % 4}",
    }


def _queue_sales(home: Path, count: int, key: str, merchant: str = MERCHANT) -> None:
    """Commit ``count`` sales to the agent's queue exactly as the agent does offline."""
    from receco_agent.outbox import Outbox
    from receco_agent.tokens import new_token, short_code_for
    from receco_agent.transactions import to_service_input, validate

    outbox = Outbox(home / "queue.sqlite3")
    now = datetime.now(UTC)
    for number in range(count):
        tx = validate(_sale(number, merchant))
        token = new_token(key)
        code = short_code_for(token)
        body = json.dumps(to_service_input(tx, token, code, now), separators=(",", ":"))
        outbox.add(token, code, body, tx.local_fields)


class DelayProxy:
    """A TCP proxy to 127.0.0.1:<target> adding ``one_way`` seconds to every chunk in each
    direction, and a round trip before a new connection carries data (the handshake)."""

    def __init__(self, target: int, one_way: float):
        self.target = target
        self.one_way = one_way
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=512))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened = time.monotonic()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        handshake_done = opened + 2 * self.one_way
        await asyncio.gather(
            self._pump(reader, up_writer, handshake_done), self._pump(up_reader, writer, 0.0), return_exceptions=True
        )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, not_before: float) -> None:
        chunks: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await chunks.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not chunk:
                    writer.close()
                    return
                writer.write(chunk)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                chunk = await reader.read(65536)
                chunks.put_nowait((max(time.monotonic(), not_before) + self.one_way, chunk))
                if not chunk:
                    break
            await delivering
        except (ConnectionError, OSError):
            delivering.cancel()
            writer.close()


def _agent_env(home: Path, key: str, proxy_port: int, agent_port: int, merchant: str = MERCHANT) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RECECO_")}
    env.update(
        {
            "RECECO_AGENT_HOME": str(home),
            "RECECO_MERCHANT_ID": merchant,
            "RECECO_API_KEY": key,
            "RECECO_API_URL": f"http://127.0.0.1:{proxy_port}/api",
            "RECECO_WEB_URL": "http://127.0.0.1:8000",
            "RECECO_AGENT_PORT": str(agent_port),
            "RECECO_PRINT_QR": "false",
            "RECECO_LOG_LEVEL": os.environ.get("DRAIN_AGENT_LOG_LEVEL", "warning"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(AGENT_SRC), os.environ.get("PYTHONPATH")])),
        }
    )
    return env


def _health(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return json.loads(response.read())
    except OSError:
        return None


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _post_sale(port: int, number: int, merchant: str = MERCHANT) -> tuple[float, float, str]:
    """Ring up one sale; return (when it was sent, time.monotonic(); seconds to the answer; its token)."""
    body = json.dumps(_sale(number, merchant)).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/transactions", data=body, headers={"Content-Type": "application/json"}
    )
    sent = time.monotonic()
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    elapsed = time.perf_counter() - started
    if answer.get("status") != "success":
        raise RuntimeError(f"the agent refused a POS sale: {answer}")
    return sent, elapsed, answer["receiptId"]


def _backlog_done(home: Path, count: int) -> int:
    """How many of the ``count`` sales queued before the start (ids 1 to count) are confirmed."""
    connection = sqlite3.connect(f"file:{home / 'queue.sqlite3'}?mode=ro", uri=True, timeout=10)
    try:
        query = "SELECT count(*) FROM outbox WHERE state = 'done' AND id <= ?"
        return connection.execute(query, (count,)).fetchone()[0]
    finally:
        connection.close()


def _pos(port: int, interval: float, done, answers, merchant: str = MERCHANT) -> None:
    """Ring up a sale every ``interval`` seconds until ``done``; put the (sent, seconds, token)
    of each in ``answers``.

    It runs in a process of its own, as a POS is a machine of its own: in this one, the
    proxy's thread would hold the interpreter lock for part of the time being measured.
    """
    latencies = []
    number = 0
    while not done.wait(interval):
        latencies.append(_post_sale(port, number, merchant))
        number += 1
    answers.put(latencies)


def _run_agent(args, home: Path, key: str, proxy_port: int, workdir: Path) -> None:
    agent_port = _free_port()
    log = (workdir / "agent.log").open("wb")
    started = time.monotonic()
    process = subprocess.Popen(
        [PYTHON, "-m", "receco_agent", "start"],
        env=_agent_env(home, key, proxy_port, agent_port),
        stdout=subprocess.DEVNULL,
        stderr=log,
        cwd=ROOT,
    )
    try:
        while _health(agent_port) is None:
            if process.poll() is not None:
                sys.exit(f"the agent exited:\n{(workdir / 'agent.log').read_text()}")
            time.sleep(0.01)
        up = time.monotonic() - started
        processes = multiprocessing.get_context("spawn")
        done, answers = processes.Event(), processes.Queue()
        pos = processes.Process(target=_pos, args=(agent_port, args.pos_interval_ms / 1000, done, answers))
        if args.pos_interval_ms:
            pos.start()
        peak_rss = 0
        try:
            while True:
                peak_rss = max(peak_rss, _rss_kib(process.pid))
                if _backlog_done(home, args.sales) >= args.sales:
                    break
                if time.monotonic() - started > args.timeout:
                    sys.exit(f"the queue did not drain within {args.timeout:g} s")
                time.sleep(0.25)
        finally:
            done.set()
            samples = answers.get(timeout=60) if args.pos_interval_ms else []
            latencies = [elapsed for _, elapsed, _ in samples]
            if args.pos_interval_ms:
                pos.join(60)
        drained = time.monotonic() - started
        time.sleep(1)  # the last POS sales go up too
        idle_rss = _rss_kib(process.pid)
    finally:
        process.terminate()
        process.wait(30)
        if os.environ.get("DRAIN_AGENT_LOG"):
            Path(os.environ["DRAIN_AGENT_LOG"]).write_bytes((workdir / "agent.log").read_bytes())
    ms = sorted(latency * 1000 for latency in latencies)
    print(f"  round trip    {args.rtt_ms:g} ms added by the proxy (half each way)")
    print(f"  drained       {args.sales:,} queued sales in {drained:.1f} s (from the agent's start)")
    if ms:
        p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
        print(f"  POS answers   {len(ms)} sales while draining: p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms")
    print(f"  agent start   {up * 1000:.0f} ms until /health answered")
    print(f"  agent memory  peak RSS {peak_rss / 1024:.1f} MiB while draining, {idle_rss / 1024:.1f} MiB after")


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


def _check_exactly_once(url: str, queued: int) -> None:
    with psycopg.connect(url) as connection:
        total, distinct = connection.execute(
            "SELECT count(*), count(DISTINCT token) FROM receipts_receipt"
            " WHERE merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
            (MERCHANT,),
        ).fetchone()
    verdict = "each exactly once" if total == distinct and total >= queued else "NOT exactly once"
    print(f"  service       holds {total:,} receipts of {MERCHANT}, {distinct:,} tokens: {verdict}")


if __name__ == "__main__":
    main()
