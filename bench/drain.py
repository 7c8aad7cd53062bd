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
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.agents import (  # noqa: E402
    DelayProxy,
    agent_env,
    backlog_done,
    health,
    queue_sales,
    rss_kib,
    run_pos,
)
from bench.servers import (  # noqa: E402
    LIMIT_ENV,
    PYTHON,
    ROOT,
    create_database,
    database_url,
    free_port,
    load_average,
    manage,
    project_env,
    refused_calls,
    serve,
    stop,
    wait_until_up,
)

MERCHANT = "bench-drain"


def main() -> None:
    args = _arguments()
    url = database_url(args.database_url, args.database)
    env = _prepare(args, url)
    key = manage(env, "createapikey", MERCHANT, "--type", "live").strip().splitlines()[-1].strip()
    print(f"  load average  {load_average()} at the start", flush=True)
    with tempfile.TemporaryDirectory(prefix="receco-drain-") as tmp:
        workdir = Path(tmp)
        home = workdir / "agent"
        started = time.monotonic()
        queue_sales(home, args.sales, key, MERCHANT)
        print(f"  queued {args.sales:,} sales offline in {time.monotonic() - started:.1f} s", flush=True)
        # Metrics on, to count the calls refused by a rate limit (each worker writes its
        # values here; a scrape adds them up).
        (workdir / "metrics").mkdir()
        env = dict(env, RECECO_METRICS="true", PROMETHEUS_MULTIPROC_DIR=str(workdir / "metrics"))
        server = (
            None
            if args.project_url
            else serve(args, "receco.wsgi:application", args.port, env, workdir / "gunicorn.log")
        )
        proxy = DelayProxy(args.port, args.rtt_ms / 2000)
        try:
            if server is not None:
                wait_until_up(server)
            proxy.start()
            _run_agent(args, home, key, proxy.port, workdir)
            refused = refused_calls(args.port)
        finally:
            proxy.stop()
            if server is not None:
                stop(server)
    print(f"  refused       {refused:,} calls answered 429 by a rate limit")
    print(f"  load average  {load_average()} at the end")
    _check_exactly_once(url, args.sales)


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
    parser.add_argument(
        "--project-url",
        help="the project already served there (on 127.0.0.1, on --database, its metrics on: RECECO_METRICS, with"
        " this environment's DJANGO_SECRET_KEY: the key it makes is read under it) instead of a gunicorn of the"
        " run's own (the tests' smoke runs share one so)",
    )
    args = parser.parse_args()
    if args.project_url and args.default_limits:
        parser.error("--default-limits serves the project with other limits: it cannot be given --project-url")
    args.port = urlsplit(args.project_url).port if args.project_url else args.port or free_port()
    return args


def _prepare(args, url: str) -> dict:
    create_database(url)
    env = project_env(args, url, f"http://127.0.0.1:{args.port}")
    if args.default_limits:
        for name in LIMIT_ENV:
            env.pop(name)
    manage(env, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(url, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM merchants_merchant WHERE string_id = %s", (MERCHANT,)).fetchone():
            manage(env, "createmerchant", MERCHANT, "--name", "Bench Drain")
        connection.execute(
            "DELETE FROM receipts_receipt WHERE merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
            (MERCHANT,),
        )
    return env


def _run_agent(args, home: Path, key: str, proxy_port: int, workdir: Path) -> None:
    agent_port = free_port()
    log = (workdir / "agent.log").open("wb")
    started = time.monotonic()
    process = subprocess.Popen(
        [PYTHON, "-m", "receco_agent", "start"],
        env=agent_env(home, key, proxy_port, agent_port, MERCHANT),
        stdout=subprocess.DEVNULL,
        stderr=log,
        cwd=ROOT,
    )
    try:
        while health(agent_port) is None:
            if process.poll() is not None:
                sys.exit(f"the agent exited:\n{(workdir / 'agent.log').read_text()}")
            time.sleep(0.01)
        up = time.monotonic() - started
        processes = multiprocessing.get_context("spawn")
        done, answers = processes.Event(), processes.Queue()
        pos = processes.Process(target=run_pos, args=(agent_port, args.pos_interval_ms / 1000, done, answers, MERCHANT))
        if args.pos_interval_ms:
            pos.start()
        peak_rss = 0
        try:
            while True:
                peak_rss = max(peak_rss, rss_kib(process.pid))
                if backlog_done(home, args.sales) >= args.sales:
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
        deadline = time.monotonic() + 60  # the last POS sales go up too
        while (health(agent_port) or {}).get("pending") and time.monotonic() < deadline:
            time.sleep(0.05)
        idle_rss = rss_kib(process.pid)
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
