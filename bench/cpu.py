"""CPU per request through the whole WSGI stack, in one process: for comparing two commits
on a machine that is not quiet, where bench/run.py's req/s wander with the neighbours' load.

Each request is handed to Django's WSGI handler as gunicorn would hand it (middleware,
admission in Redis, the SQL on PostgreSQL) and timed with ``time.process_time``: this
process's CPU (Python, the ORM, psycopg), not PostgreSQL's nor Redis's. Scenarios take
turns in rounds; the fastest and the median round are printed, in microseconds of CPU
per request (the fastest is the least disturbed by other processes).

Run it on a database that ``bench/run.py`` prepared (it reads the seeded receipts of
``bench-shop`` and makes sales for ``bench-pos``, deleting them after):

    python bench/cpu.py --database-url postgres://postgres@127.0.0.1:5432/receco_bench_10k

To compare commits, run the same file against each commit's tree with ``--root``. With
``--floor`` it runs Django's floor (bench/floor: the reference's SQL through Django's
connection, no middleware) instead of the project; with ``--key`` every request carries
that API key (createapikey's, of ``bench-pos`` for its sales). The project signs (a key made
for the run), so the log's hook runs on every sale, as in bench/run.py.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

# The sale and merchants of the load benchmark, so both measure the same request.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.servers import LIMIT_ENV, signing_keys  # noqa: E402
from bench.workload import CREATE_BODY, POS_MERCHANT, SEED_MERCHANT  # noqa: E402

SALE = {key: value for key, value in CREATE_BODY.items() if key != "token"}


def main() -> None:
    args = _arguments()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ.update(
        {
            "DATABASE_URL": args.database_url,
            "BENCH_DATABASE_URL": args.database_url,
            "REDIS_URL": args.redis_url,
            "RECECO_CACHE_PREFIX": "receco-bench-cpu",
            "DJANGO_SETTINGS_MODULE": "bench.floor.settings" if args.floor else "receco.settings",
            # The one API keys were made under, when --key is given (their digests are keyed by it).
            "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or "bench-only-" + secrets.token_hex(16),
            "DJANGO_DEBUG": "false",
            "DJANGO_LOG_LEVEL": "WARNING",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "RECECO_WEB_URL": "http://127.0.0.1:8000",
            "RECECO_TASKS_BACKEND": "database",
            **LIMIT_ENV,
        }
    )
    keys = signing_keys()
    if keys is not None:
        os.environ["RECECO_SIGNING_KEYS"] = keys
    from django.core.wsgi import get_wsgi_application
    from django.db import connection

    application = get_wsgi_application()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.token, r.short_code FROM receipts_receipt r JOIN merchants_merchant m ON m.id = r.merchant_id"
            " WHERE m.string_id = %s ORDER BY r.id LIMIT %s",
            [SEED_MERCHANT, args.requests],
        )
        references = cursor.fetchall()
    if not references:
        sys.exit(f"no receipts of {SEED_MERCHANT}: prepare the database with bench/run.py first")

    scenarios = {
        "getReceipt by short code": lambda i: _get(references[i % len(references)][1], args.key),
        "getReceipt by token": lambda i: _get(references[i % len(references)][0], args.key),
        "createReceiptFromPOS": lambda i: _post({**SALE, "token": f"cpu_{secrets.token_hex(12)}"}, args.key),
    }
    if args.only:
        scenarios = {name: request for name, request in scenarios.items() if any(part in name for part in args.only)}
    rounds: dict[str, list[float]] = {name: [] for name in scenarios}
    profile = cProfile.Profile(time.process_time) if args.profile else None
    try:
        if args.instructions:
            for name, request in scenarios.items():
                _cpu_per_request(application, request, args.requests)  # warm: connections, prepared statements
                rounds[name].append(_instructions(args.instructions, application, request, args.requests))
        else:
            for index in range(args.rounds):
                if profile and index == 1:  # the first round warms up: connections, prepared statements, caches
                    profile.enable()
                for name, request in scenarios.items():
                    rounds[name].append(_cpu_per_request(application, request, args.requests))
        if profile:
            profile.disable()
            pstats.Stats(profile).sort_stats(args.profile).print_stats(50)
    finally:
        with connection.cursor() as cursor:
            made = (
                "SELECT id FROM receipts_receipt WHERE token LIKE 'cpu\\_%%'"
                " AND merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)"
            )
            cursor.execute("SELECT to_regclass('einvoicing_report') IS NOT NULL")
            if cursor.fetchone()[0]:  # the sales' reports to NRS, when bench-pos reports (docs/benchmarks.md)
                cursor.execute(f"DELETE FROM einvoicing_report WHERE receipt_id IN ({made})", [POS_MERCHANT])
                cursor.execute(
                    "DELETE FROM messaging_delivery WHERE channel = 'einvoice'"
                    " AND merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
                    [POS_MERCHANT],
                )
            cursor.execute(f"DELETE FROM receipts_receipt WHERE id IN ({made})", [POS_MERCHANT])
        _report(args, root, rounds)


def _report(args, root: Path, rounds: dict[str, list[float]]) -> None:
    served = "Django's floor" if args.floor else "the project" + (", with a key" if args.key else "")
    if args.instructions:
        print(f"root {root} ({served})  {args.requests} requests after as many to warm up, instructions per request")
        for name, figures in rounds.items():
            print(f"  {name:28} {figures[0]:12,.0f}")
        return
    print(f"root {root} ({served})  {args.requests} requests x {args.rounds} rounds, CPU µs per request")
    print(f"  {'scenario':28} {'fastest':>8} {'median':>8}   rounds")
    for name, figures in rounds.items():
        rounds_text = " ".join(f"{figure:.0f}" for figure in figures)
        print(f"  {name:28} {min(figures):8.0f} {statistics.median(figures):8.0f}   {rounds_text}")


def _instructions(out_file: str, application, request, count: int) -> float:
    """Instructions per request of ``count`` requests, counted by the callgrind this process
    runs under (its --callgrind-out-file is ``out_file``): its counters zeroed before, dumped
    after. This process waits, running nothing, while callgrind_control asks.

    The wake-ups of tasks (the log's appender after a sale) are held back meanwhile: a
    process queues one at most once a second, one sale in hundreds at bench/run.py's rate
    but one in a few under callgrind, fifty times slower, which would count it in every
    request. Each sale still runs its hook up to the wake-up's check."""
    _hold_wakeups()
    _callgrind_control("--zero")
    _cpu_per_request(application, request, count)
    _callgrind_control("--dump")
    dumps = [path for path in Path(out_file).parent.glob(Path(out_file).name + ".*") if path.suffix[1:].isdigit()]
    dumps.sort(key=lambda path: int(path.suffix[1:]))
    totals = next(line for line in dumps[-1].read_text().splitlines() if line.startswith(("summary:", "totals:")))
    return int(totals.split()[1]) / count


def _hold_wakeups() -> None:
    try:
        from receco.lib import wakeups
    except ImportError:  # a tree from before them
        return
    for wakeup in wakeups._ALL:  # noqa: SLF001 (the benchmark holds back what the service never does)
        wakeup.runs_at = float("inf")  # as if the task queued last were still to run


def _callgrind_control(command: str) -> None:
    subprocess.run(["callgrind_control", command, str(os.getpid())], check=True, capture_output=True)


def _cpu_per_request(application, request, count: int) -> float:
    statuses = []
    started = time.process_time()
    for i in range(count):
        environ = request(i)
        body = b"".join(application(environ, lambda status, headers, _=None: statuses.append(status)))
        if not statuses[-1].startswith("200"):
            sys.exit(f"{environ['PATH_INFO']} answered {statuses[-1]}: {body[:300]!r}")
    return (time.process_time() - started) / count * 1e6


def _environ(method: str, path: str, query: str = "", body: bytes = b"", key: str | None = None) -> dict:
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if key:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return environ


def _get(reference: str, key: str | None) -> dict:
    return _environ("GET", "/api/trpc/getReceipt", "input=" + quote(json.dumps({"token": reference})), key=key)


def _post(sale: dict, key: str | None) -> dict:
    return _environ("POST", "/api/trpc/createReceiptFromPOS", body=json.dumps(sale).encode(), key=key)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="a database bench/run.py prepared")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]), help="the project tree to run")
    parser.add_argument("--requests", type=int, default=2000, help="requests per scenario and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", action="append", help="run scenarios whose name contains this (repeatable)")
    parser.add_argument("--floor", action="store_true", help="run Django's floor (bench/floor), not the project")
    parser.add_argument(
        "--profile", choices=["cumulative", "tottime"], help="print cProfile's top functions after the first round"
    )
    parser.add_argument(
        "--instructions",
        metavar="OUT_FILE",
        help="under valgrind --tool=callgrind --callgrind-out-file=OUT_FILE: count each scenario's instructions"
        " per request (one warm-up batch, then one counted)",
    )
    parser.add_argument("--key", help="an API key every request carries (createapikey bench-pos --type live)")
    return parser.parse_args()


if __name__ == "__main__":
    main()
