"""The load benchmark: the project against a bare reference and Django's floor, on
PostgreSQL, under gunicorn.

    python bench/run.py --receipts 10000 --receipts 1000000 --duration 10 --connections 8

For each receipt count it prepares a database of its own (created, migrated and seeded
once, reused while it holds that many seeded receipts: ``seedreceipts``, over one merchant
per 10,000 receipts, at most 1,000), serves the project, the bare reference
(bench/reference.py: WSGI and psycopg) and Django's floor (bench/floor: the reference's SQL
through Django's connection, no middleware) with the same gunicorn settings, drives each
scenario from a second process (wrk with bench/wrk.lua when installed, else
bench/loadgen.py) and prints req/s, p50 and p99 for every scenario, each as a share of the
reference and of the floor, then the goals.

Scenarios: getReceipt by random short codes, by random tokens, and createReceiptFromPOS
with fresh tokens, for a merchant without webhooks and for one with a webhook endpoint
(its events recorded and queued as in production, where a db_worker sends them); each
anonymous, with a test key and with a live key (the live limits raised through the
environment so the limiter runs on every request without refusing). The project signs
(RECECO_SIGNING_KEYS, a key made for the run), so the log's hook runs on every sale as in
production. The floor has no keys: every variant is compared with its one, anonymous,
figure.

With --interleave the databases are served at once (each on its own pair of ports: the
project and the reference, no floor) and measured in the same rounds, one after the other,
so that a receipt count's figures and their ratio between counts suffer the machine's other
load alike:

    python bench/run.py --receipts 10000 --receipts 10000000 --interleave --only getReceipt
"""

import argparse
import functools
import json
import os
import platform
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
FLOOR = "floor"  # Django's floor, among the rows of a scenario
FLOOR_LABEL = "Django's floor (no middleware)"
PYTHON = sys.executable
SEED_MERCHANT = "bench-shop"  # a test merchant: holds the seeded (test) receipts that getReceipt reads
POS_MERCHANT = "bench-pos"  # receives the receipts created under load (deleted before each run)
HOOKED_MERCHANT = "bench-hooked"  # the same, with a webhook endpoint: every receipt is an event
HOOK_URL = "https://hooks.bench.invalid/receco"  # never sent to: no worker runs during the benchmark
CREATE_SCENARIO = "createReceiptFromPOS, fresh tokens"
HOOKED_SCENARIO = "createReceiptFromPOS, with a webhook"
SAMPLE_SIZE = 20_000  # references drawn from the table for the getReceipt scenarios

CREATE_BODY = {
    "token": "TOKEN",
    "merchant_string_id": POS_MERCHANT,
    "merchant_name": "Bench POS",
    "merchant_logo": None,
    "accent_color": None,
    "total_amount": 130000,
    "currency": "NGN",
    "transaction_date": "2026-11-22T10:15:00.000Z",
    "items": [
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
        {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
    ],
    "category": "restaurant",
    "payment_method": "card",
    "location": "Lekki Phase 1",
    "status": "completed",
    "customer_email": None,
    "customer_phone": None,
}
RECEIPT_FIELDS = {
    "id", "token", "short_code", "merchant_id", "merchant_name", "merchant_logo", "accent_color", "total_amount",
    "currency", "transaction_date", "items", "category", "payment_method", "location", "status", "customer_email",
    "customer_phone", "created_at", "updated_at",
    # The whole receipt: its breakdown, card, and refunds.
    "subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details", "receipt_type", "refund_of",
    "refunds",
    # What a tax receipt states: its number and what it is.
    "receipt_number", "title", "merchant_registration_number",
}  # fmt: skip

# Settings for the project's processes. The limits are raised far above what two cores
# can serve, so every request still goes through the limiter and none is refused.
LIMIT_ENV = {
    "RECECO_RATELIMIT_LIVE_KEY": "60000000/m,1000000/s",
    "RECECO_RATELIMIT_ANONYMOUS": "60000000/m",
    "RECECO_RATELIMIT_FAILED_LOOKUPS": "60000000/m",
}


@dataclass
class Scenario:
    name: str  # "getReceipt by short code", ...
    mode: str  # "get" or "create"
    refs: Path | None = None
    merchant: str = POS_MERCHANT  # whose receipts "create" makes


@dataclass
class Variant:
    name: str  # "anonymous", "test key", "live key"
    auth: str | None = None  # Authorization header, None for anonymous calls
    unavailable: str | None = None  # why this variant cannot run on this commit


@dataclass
class Result:
    requests: int
    duration_us: int
    p50_us: int
    p99_us: int
    errors: int
    extra: dict = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return self.requests / (self.duration_us / 1e6) if self.duration_us else 0.0


def main() -> None:
    args = _arguments()
    loadgen = _loadgen(args.loadgen)
    print(_header(args, loadgen), flush=True)
    results: dict[int, dict] = {}
    if args.interleave:
        results = _bench_interleaved(args, loadgen)
    else:
        for count in args.receipts:
            results[count] = _bench_database(args, count, loadgen)
    _print_goals(args, results)
    if args.json:
        Path(args.json).write_text(json.dumps(_jsonable(results), indent=2))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--receipts", type=int, action="append", help="receipts in the table (repeatable)")
    parser.add_argument("--duration", type=float, default=10, help="seconds measured per scenario")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of load before each measurement")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per scenario, taken in turns; medians kept")
    parser.add_argument("--connections", type=int, default=8, help="concurrent keep-alive connections")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (project and reference alike)")
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (sync, gthread)")
    parser.add_argument("--threads", type=int, default=1, help="threads per gthread worker")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/"),
        help="PostgreSQL server (its database name is replaced by receco_bench_<count>)",
    )
    parser.add_argument(
        "--database-prefix", default="receco_bench", help="names of the databases made: <prefix>_10k, <prefix>_1m"
    )
    parser.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6"))
    parser.add_argument(
        "--port", type=int, default=8701, help="project port; the reference uses the next one, the floor the one after"
    )
    parser.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--only", action="append", help="run scenarios whose name contains this (repeatable)")
    parser.add_argument("--variants", default="anonymous,test key,live key", help="comma-separated auth variants")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--interleave", action="store_true", help="measure the receipt counts in the same rounds, taking turns"
    )
    parser.add_argument(
        "--no-signing",
        action="store_true",
        help="serve the project without a signing key (the log's hook idle): runs with and without it say"
        " what signing costs a sale",
    )
    args = parser.parse_args()
    args.receipts = args.receipts or [10_000, 1_000_000]
    args.variants = [name.strip() for name in args.variants.split(",") if name.strip()]
    return args


def _loadgen(choice: str) -> str:
    if choice == "auto":
        return "wrk" if shutil.which("wrk") else "python"
    if choice == "wrk" and not shutil.which("wrk"):
        sys.exit("wrk is not installed (apt-get install wrk), use --loadgen python")
    return choice


# -- the report --------------------------------------------------------------------------


def _header(args, loadgen: str) -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor() or "unknown",
    )
    memory = next(
        (
            int(line.split()[1]) // 1024**2
            for line in Path("/proc/meminfo").read_text().splitlines()
            if "MemTotal" in line
        ),
        0,
    )
    commit = _git("rev-parse", "--short", "HEAD") + (
        " (with uncommitted changes)" if _git("status", "--porcelain") else ""
    )
    with psycopg.connect(_database_url(args.database_url, "postgres")) as connection:
        server = connection.execute("SHOW server_version").fetchone()[0]
    threads = f", {args.threads} threads each" if args.worker_class == "gthread" else ""
    wrk_version = (
        subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("[")[0].strip()
        if shutil.which("wrk")
        else "wrk not installed"
    )
    lines = [
        "Receco load benchmark",
        f"  date      {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"  machine   {os.cpu_count()} cores, {cpu}, {memory} GiB, {platform.system()} {platform.release()}",
        f"  software  Python {platform.python_version()}, PostgreSQL {server}, gunicorn {_gunicorn_version()}",
        f"  commit    {commit}",
        f"  servers   gunicorn {args.workers} {args.worker_class} workers{threads} (bench/gunicorn.conf.py: no access"
        " log), the same for the project, the reference and Django's floor",
        f"  load      {wrk_version if loadgen == 'wrk' else 'bench/loadgen.py (Python threads)'}, "
        f"{args.connections} connections, on loopback",
        f"  method    per scenario: {args.warmup:g} s warm-up, then {args.rounds} rounds of {args.duration:g} s, the"
        " reference, the floor and each variant taking turns; the median round is shown, and the median of the"
        " rounds' ratios",
        f"  load avg  {_load_average()} before the run (other processes on the machine disturb the figures)",
    ]
    return "\n".join(lines)


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _print_row(label: str, result: Result | None, note: str = "") -> None:
    """One row: req/s, p50, p99, and the shares of the reference and of the floor (- for itself)."""
    if result is None:
        print(f"  {label:<38} {'not available':>10}  {note}", flush=True)
        return
    shares = " ".join(f"{result.extra[key]:8.2f}" if key in result.extra else f"{'-':>8}" for key in ("ratio", FLOOR))
    errors = f"  {result.errors} errors" if result.errors else ""
    print(
        f"  {label:<38} {result.rps:10.0f} {result.p50_us / 1000:8.2f} {result.p99_us / 1000:8.2f} {shares}{errors}",
        flush=True,
    )


def _print_goals(args, results: dict[int, dict]) -> None:
    print("\nGoals", flush=True)
    checks = []
    for count, table in results.items():
        for scenario, rows in table.items():
            reference, anonymous = rows.get("reference"), rows.get("anonymous")
            if reference and anonymous:
                ratio = anonymous.extra["ratio"]
                checks.append((ratio >= 0.5, f"{count:>9,} {scenario}: {ratio:.2f} of the reference (>= 0.5)"))
            checks += _floor_goals(count, scenario, rows)
            for name in ("test key", "live key"):
                keyed = rows.get(name)
                if keyed and anonymous:
                    cost = keyed.extra["cost"]
                    checks.append((cost <= 0.10, f"{count:>9,} {scenario}, {name}: costs {cost:.0%} (<= 10%)"))
            for name, result in rows.items():
                if result and name not in ("reference", FLOOR):
                    checks.append(
                        (
                            result.p99_us < 50_000 and not result.errors,
                            f"{count:>9,} {scenario}, {name}: p99 {result.p99_us / 1000:.1f} ms (< 50 ms), "
                            f"{result.errors} errors",
                        )
                    )
        plain, hooked = table.get(CREATE_SCENARIO, {}), table.get(HOOKED_SCENARIO, {})
        for name, result in hooked.items():
            if result and name not in ("reference", FLOOR) and plain.get(name):
                share = result.extra["ratio"] / plain[name].extra["ratio"]
                checks.append(
                    (share >= 0.85, f"{count:>9,} {HOOKED_SCENARIO}, {name}: {share:.2f} of without one (>= 0.85)")
                )
    counts = sorted(results)
    if len(counts) > 1:
        small, large = counts[0], counts[-1]
        for scenario in results[small]:
            if not scenario.startswith("getReceipt"):
                continue
            a, b = results[small][scenario].get("anonymous"), results[large][scenario].get("anonymous")
            if a and b:
                growth = b.p50_us / a.p50_us - 1
                checks.append(
                    (
                        growth <= 0.25,
                        f"{scenario}: p50 {a.p50_us / 1000:.2f} ms at {small:,}, {b.p50_us / 1000:.2f} ms at {large:,}"
                        f" ({growth:+.0%}, flat within 25%)",
                    )
                )
    for ok, text in checks:
        print(f"  {'met   ' if ok else 'MISSED'} {text}", flush=True)


# Issue 25: a sale at 0.9 of Django's floor or better (anonymous and with a live key),
# getReceipt at 0.95 or better.
FLOOR_GOALS = {CREATE_SCENARIO: (0.9, ("anonymous", "live key")), "getReceipt": (0.95, ("anonymous",))}


def _floor_goals(count: int, scenario: str, rows: dict) -> list[tuple[bool, str]]:
    goal = next((goal for prefix, goal in FLOOR_GOALS.items() if scenario.startswith(prefix)), None)
    if goal is None or not rows.get(FLOOR):
        return []
    least, names = goal
    checks = []
    for name in names:
        result = rows.get(name)
        if result and FLOOR in result.extra:
            share = result.extra[FLOOR]
            against = "" if name == "anonymous" else " (the floor's anonymous figure: it has no keys)"
            text = f"{count:>9,} {scenario}, {name}: {share:.2f} of Django's floor{against} (>= {least})"
            checks.append((share >= least, text))
    return checks


def _jsonable(results: dict[int, dict]) -> dict:
    return {
        str(count): {
            scenario: {name: (vars(result) | {"rps": result.rps}) if result else None for name, result in rows.items()}
            for scenario, rows in table.items()
        }
        for count, table in results.items()
    }


# -- one database ------------------------------------------------------------------------


def _bench_database(args, count: int, loadgen: str) -> dict:
    name = f"{args.database_prefix}_{_label(count)}"
    url = _database_url(args.database_url, name)
    print(f"\n{count:,} receipts (database {name})", flush=True)
    _prepare_database(args, url, count, _seed_merchants(max(args.receipts)))
    workdir = Path(tempfile.mkdtemp(prefix="receco-bench-"))
    scenarios = _scenarios(url, workdir)
    project_url = f"http://127.0.0.1:{args.port}"
    urls = {
        "project": project_url,
        "reference": f"http://127.0.0.1:{args.port + 1}",
        FLOOR: f"http://127.0.0.1:{args.port + 2}",
    }
    env = _project_env(args, url, project_url)
    servers = [
        _serve(args, "receco.wsgi:application", args.port, env, workdir / "project.log"),
        _serve(args, "bench.reference:application", args.port + 1, env, workdir / "reference.log"),
        _serve(args, "bench.floor.wsgi:application", args.port + 2, env, workdir / "floor.log"),
    ]
    table: dict[str, dict[str, Result | None]] = {}
    try:
        for server in servers:
            _wait_until_up(server)
        variants = _variants(args, url, env)
        print(
            f"  {'scenario':<38} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'of ref':>8} {'of floor':>8}\n"
            "  (of floor: the share of Django's floor, which has no keys: a keyed call is compared with its one,"
            " anonymous, figure)",
            flush=True,
        )
        for scenario in scenarios:
            if args.only and not any(word in scenario.name for word in args.only):
                continue
            table[scenario.name] = rows = _measure_scenario(args, loadgen, scenario, variants, urls)
            print(f"  {scenario.name}", flush=True)
            _print_row("  bare reference (WSGI + psycopg)", rows["reference"])
            _print_row(f"  {FLOOR_LABEL}", rows[FLOOR])
            for variant in variants:
                _print_row(f"  {variant.name}", rows[variant.name], variant.unavailable or "")
    finally:
        for server in servers:
            _stop(server)
    _delete_created(url)
    return table


def _bench_interleaved(args, loadgen: str) -> dict[int, dict]:
    """Every receipt count's database served at once and measured in the same rounds."""
    opened, servers = [], []
    try:
        for index, count in enumerate(args.receipts):
            name = f"{args.database_prefix}_{_label(count)}"
            url = _database_url(args.database_url, name)
            print(f"\n{count:,} receipts (database {name})", flush=True)
            _prepare_database(args, url, count, _seed_merchants(max(args.receipts)))
            workdir = Path(tempfile.mkdtemp(prefix="receco-bench-"))
            port = args.port + 2 * index
            urls = {"project": f"http://127.0.0.1:{port}", "reference": f"http://127.0.0.1:{port + 1}"}
            env = _project_env(args, url, urls["project"])
            pair = [
                _serve(args, "receco.wsgi:application", port, env, workdir / "project.log"),
                _serve(args, "bench.reference:application", port + 1, env, workdir / "reference.log"),
            ]
            servers += pair
            for server in pair:
                _wait_until_up(server)
            opened.append((count, url, _scenarios(url, workdir), _variants(args, url, env), urls))
        results: dict[int, dict] = {count: {} for count, *_ in opened}
        for position, scenario in enumerate(opened[0][2]):
            if args.only and not any(word in scenario.name for word in args.only):
                continue
            targets = []
            for count, _, scenarios, variants, urls in opened:
                targets += _targets(scenarios[position], variants, urls, key=count)
            rounds = _measure_targets(args, loadgen, targets)
            print(f"\n  {scenario.name}: {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8}   ratio to reference", flush=True)
            for count, _, _, variants, _ in opened:
                mine = {name: results for (key, name), results in rounds.items() if key == count}
                rows = results[count][scenario.name] = _rows(mine, variants)
                _print_row(f"  {count:,}: bare reference", rows["reference"])
                for variant in variants:
                    _print_row(f"  {count:,}: {variant.name}", rows[variant.name], variant.unavailable or "")
            _print_between_counts(opened, rounds)
    finally:
        for server in servers:
            _stop(server)
        for _, url, *_ in opened:
            _delete_created(url)
    return results


def _print_between_counts(opened: list, rounds: dict[tuple, list[Result]]) -> None:
    """Each variant's throughput at the largest count as a share of the smallest, round by
    round (the median kept), and the load average now."""
    small, large = opened[0][0], opened[-1][0]
    if small == large:
        return
    for name in [name for key, name in rounds if key == small]:
        ratio = _median_ratio(rounds[large, name], rounds[small, name])
        p50 = statistics.median(r.p50_us for r in rounds[large, name]) / max(
            1, statistics.median(r.p50_us for r in rounds[small, name])
        )
        print(
            f"    {name}: {large:,} vs {small:,}: {ratio:.2f} of the throughput, p50 x{p50:.2f}"
            f" (load average {_load_average()})",
            flush=True,
        )


def _label(count: int) -> str:
    for size, suffix in ((1_000_000, "m"), (1_000, "k")):
        if count >= size and count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)


def _database_url(base: str, name: str) -> str:
    parts = urlsplit(base)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit(f"the benchmark needs PostgreSQL, not {base!r}")
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def _prepare_database(args, url: str, count: int, seed_merchants: int) -> None:
    """The database at ``url`` migrated, with the benchmark's merchants, holding ``count``
    seeded receipts spread over ``seed_merchants`` merchants (or ``count``, if fewer): the same
    merchants in every database of a run, whose workers each read every merchant a
    receipt names once a minute (merchants.admission.memory), whatever the table's size."""
    seed_merchants = min(seed_merchants, count)
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(_database_url(args.database_url, "postgres"), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    env = _project_env(args, url, "http://127.0.0.1:8000")
    _manage(env, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(url, autocommit=True) as connection:
        merchants = [(SEED_MERCHANT, "Bench Shop"), (POS_MERCHANT, "Bench POS")]
        if _has_webhooks():
            merchants.append((HOOKED_MERCHANT, "Bench Hooked"))
        for string_id, display in merchants:
            if not connection.execute("SELECT 1 FROM merchants_merchant WHERE string_id = %s", (string_id,)).fetchone():
                _manage(env, "createmerchant", string_id, "--name", display)
        # The anonymous variant calls without a key, as a merchant that allows it is called.
        connection.execute(
            "UPDATE merchants_merchant SET require_api_key = false WHERE string_id = ANY(%s) AND require_api_key",
            ([string_id for string_id, _ in merchants],),
        )
        if (
            _has_webhooks()
            and not connection.execute(
                "SELECT 1 FROM webhooks_endpoint e JOIN merchants_merchant m ON m.id = e.merchant_id"
                " WHERE m.string_id = %s",
                (HOOKED_MERCHANT,),
            ).fetchone()
        ):
            _manage(env, "createwebhook", HOOKED_MERCHANT, HOOK_URL, "--description", "benchmark")
        # The seeded receipts are test receipts, which test keys may read as well as live ones.
        if connection.execute(
            "UPDATE merchants_merchant SET is_test = true WHERE string_id = %s AND NOT is_test", (SEED_MERCHANT,)
        ).rowcount:
            connection.execute(
                "UPDATE receipts_receipt SET livemode = false WHERE livemode"
                " AND merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
                (SEED_MERCHANT,),
            )
            connection.execute("VACUUM ANALYZE receipts_receipt")
        seeded, spread = _seeded(connection)
        if _stale(seeded, spread, count, seed_merchants):
            print(
                f"  it holds {seeded:,} seeded receipts of {spread:,} merchants: removing them to seed {count:,}"
                f" over {seed_merchants:,}",
                flush=True,
            )
            _delete_seeded(connection)
            seeded = 0
        if seeded < count:
            more = count - seeded
            print(f"  seeding {more:,} receipts over {min(seed_merchants, more):,} merchants", flush=True)
            started = time.monotonic()
            _manage(env, "seedreceipts", SEED_MERCHANT, str(more), "--merchants", str(min(seed_merchants, more)))
            print(f"  seeded in {time.monotonic() - started:.1f} s", flush=True)
        else:
            print(f"  reusing its {seeded:,} seeded receipts of {spread:,} merchants", flush=True)
    _delete_created(url)


def _seeded(connection) -> tuple[int, int]:
    """The receipts of the seeded merchant and of those seedreceipts made like it, and how
    many of those merchants hold them."""
    return connection.execute(
        "SELECT coalesce(sum(n), 0)::bigint, count(*) FROM (SELECT count(*) AS n FROM receipts_receipt r"
        " JOIN merchants_merchant m ON m.id = r.merchant_id WHERE m.string_id = %s OR m.string_id LIKE %s"
        " GROUP BY r.merchant_id) held",
        (SEED_MERCHANT, f"{SEED_MERCHANT}-%"),
    ).fetchone()


def _stale(seeded: int, spread: int, count: int, merchants: int) -> bool:
    """Whether ``seeded`` receipts held by ``spread`` merchants must go to seed ``count``
    over ``merchants``: too many, or over other merchants (fewer are topped up)."""
    return seeded > count or (seeded > 0 and spread != merchants)


def _delete_seeded(connection) -> None:
    """Remove the seeded receipts: the seeded merchant's and those of the merchants made like it."""
    for (string_id,) in connection.execute(
        "SELECT string_id FROM merchants_merchant WHERE string_id = %s OR string_id LIKE %s",
        (SEED_MERCHANT, f"{SEED_MERCHANT}-%"),
    ).fetchall():
        _delete_receipts_of(connection, string_id)


def _seed_merchants(count: int) -> int:
    """How many merchants ``count`` seeded receipts are spread over: one per 10,000, at most
    1,000 (a run's smaller databases over as many: ``_prepare_database``)."""
    return max(1, min(1000, count // 10_000))


def _delete_created(url: str) -> None:
    """Remove the receipts earlier runs created (and their events and queued tasks), so the
    table holds the seeded ones only."""
    with psycopg.connect(url, autocommit=True) as connection:
        deleted = _delete_receipts_of(connection, POS_MERCHANT)
        if _has_webhooks():
            # Only the benchmark writes these: its merchants' events and the tasks queued for them.
            deliveries = "messaging_delivery" if (ROOT / "messaging").is_dir() else "webhooks_delivery"
            tables = ("webhooks_attempt", deliveries, "webhooks_event", "django_tasks_database_dbtaskresult")
            connection.execute(f"TRUNCATE {', '.join(tables)}")
            deleted += _delete_receipts_of(connection, HOOKED_MERCHANT)
        if deleted:
            connection.execute("VACUUM ANALYZE receipts_receipt")


def _has_webhooks() -> bool:
    """Whether this commit has webhooks (the benchmark also runs on older ones)."""
    return (ROOT / "webhooks" / "management" / "commands" / "createwebhook.py").exists()


def _delete_receipts_of(connection, string_id: str) -> int:
    # A keyed sale that claimed the short code of an anonymous one (a chance collision
    # between variants) left a SetAside that refers to the receipt set aside (older
    # commits have no such table).
    if connection.execute("SELECT to_regclass('receipts_setaside')").fetchone()[0]:
        connection.execute(
            "DELETE FROM receipts_setaside WHERE receipt_id IN (SELECT r.id FROM receipts_receipt r"
            " JOIN merchants_merchant m ON m.id = r.merchant_id WHERE m.string_id = %s)",
            (string_id,),
        )
    return connection.execute(
        "DELETE FROM receipts_receipt WHERE merchant_id = (SELECT id FROM merchants_merchant WHERE string_id = %s)",
        (string_id,),
    ).rowcount


def _scenarios(url: str, workdir: Path) -> list[Scenario]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT short_code, token FROM receipts_receipt ORDER BY random() LIMIT %s", (SAMPLE_SIZE,)
        ).fetchall()
    codes, tokens = workdir / "short_codes.txt", workdir / "tokens.txt"
    codes.write_text("".join(f"{code}\n" for code, _ in rows))
    tokens.write_text("".join(f"{token}\n" for _, token in rows))
    scenarios = [
        Scenario("getReceipt by short code", "get", codes),
        Scenario("getReceipt by token", "get", tokens),
        Scenario(CREATE_SCENARIO, "create"),
    ]
    if _has_webhooks():
        scenarios.append(Scenario(HOOKED_SCENARIO, "create", merchant=HOOKED_MERCHANT))
    return scenarios


# -- keys --------------------------------------------------------------------------------


def _variants(args, url: str, env: dict) -> list[Variant]:
    """Anonymous calls, and calls with a test and a live key once the project has keys."""
    variants = [Variant("anonymous")]
    has_keys = (ROOT / "merchants" / "management" / "commands" / "createapikey.py").exists()
    for kind in ("test", "live"):
        name = f"{kind} key"
        if not has_keys:
            variants.append(Variant(name, unavailable="(no createapikey command: API keys are not on this commit)"))
            continue
        # One key per merchant: the seeded one reads its receipts, the POS one creates.
        merchants = (SEED_MERCHANT, POS_MERCHANT, *((HOOKED_MERCHANT,) if _has_webhooks() else ()))
        keys = {merchant: _create_key(env, merchant, kind) for merchant in merchants}
        variants.append(Variant(name, auth=keys))
    return [variant for variant in variants if variant.name in args.variants]


def _create_key(env: dict, merchant: str, kind: str) -> str:
    output = _manage(env, "createapikey", merchant, "--type", kind)
    return output.strip().splitlines()[-1].strip()


def _authorization(variant: Variant | None, scenario: Scenario) -> str:
    if variant is None or variant.auth is None:
        return ""
    key = variant.auth[SEED_MERCHANT if scenario.mode == "get" else scenario.merchant]
    return f"Bearer {key}"


# -- servers -----------------------------------------------------------------------------


def _project_env(args, url: str, web_url: str) -> dict:
    env = dict(os.environ)
    env.update(LIMIT_ENV)
    env.update(
        {
            "DATABASE_URL": url,
            "BENCH_DATABASE_URL": url,
            "REDIS_URL": args.redis_url,
            # One prefix a database: two served at once (--interleave) share the Redis db.
            "RECECO_CACHE_PREFIX": f"receco-bench-{urlsplit(url).path.strip('/')}",
            "DJANGO_SECRET_KEY": env.get("DJANGO_SECRET_KEY") or "bench-only-" + secrets.token_hex(16),
            "DJANGO_DEBUG": "false",
            "DJANGO_LOG_LEVEL": "WARNING",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "RECECO_WEB_URL": web_url,
            # As in production: a request only queues its tasks (webhook events), a worker sends them.
            "RECECO_TASKS_BACKEND": "database",
            "PYTHONPATH": str(ROOT),
        }
    )
    keys = None if getattr(args, "no_signing", False) else signing_keys()
    if keys is not None:  # signing on, as in production: the log's hook runs on every sale
        env["RECECO_SIGNING_KEYS"] = keys
    return env


@functools.cache
def signing_keys() -> str | None:
    """A JWK Set of one signing key made for this run, or None on a commit that does not sign."""
    if not (ROOT / "receco" / "lib" / "signingkeys.py").exists():
        return None
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))  # after any tree put first (bench/cpu.py --root runs another)
    from receco.lib.signingkeys import generate_jwk

    return json.dumps({"keys": [generate_jwk()]})


def _manage(env: dict, *command: str) -> str:
    done = subprocess.run(
        [PYTHON, str(ROOT / "manage.py"), *command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(f"manage.py {' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def _gunicorn_version() -> str:
    done = subprocess.run([PYTHON, "-m", "gunicorn", "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).split()[-1].strip("()") if done.returncode == 0 else "?"


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    log: Path


def _serve(args, app: str, port: int, env: dict, log: Path) -> Server:
    command = [
        PYTHON, "-m", "gunicorn", app,
        "--config", str(ROOT / "bench" / "gunicorn.conf.py"),
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(args.workers),
        "--worker-class", args.worker_class,
        "--threads", str(args.threads),
        "--error-logfile", str(log),
    ]  # fmt: skip
    env = dict(env, RECECO_WEB_URL=f"http://127.0.0.1:{port}")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return Server(process, f"http://127.0.0.1:{port}", log)


def _wait_until_up(server: Server, timeout: float = 120) -> None:  # three servers start at once, on a busy machine
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            sys.exit(f"gunicorn for {server.url} exited:\n{server.log.read_text() if server.log.exists() else ''}")
        try:
            urllib.request.urlopen(server.url + "/api/trpc/getReceipt", timeout=2)
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means the workers are serving
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gunicorn for {server.url} did not answer within {timeout:g} s")


def _stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


# -- load --------------------------------------------------------------------------------


def _measure_scenario(args, loadgen: str, scenario: Scenario, variants: list[Variant], urls: dict):
    """Measure the reference, Django's floor (when ``urls`` has it) and each variant in
    turns, ``--rounds`` times; keep the median round, and the median of the ratios each
    round gives (to the reference, to the floor, and for keys to anonymous calls).

    Taking turns, in an order that rotates from round to round, spreads any disturbance
    from other processes on the machine over all of them, rather than over whichever
    happened to run at the time.
    """
    targets = _targets(scenario, variants, urls)
    rounds = _measure_targets(args, loadgen, targets)
    return _rows({name: results for (name, *_), results in zip(targets, rounds.values(), strict=True)}, variants)


def _targets(scenario: Scenario, variants: list[Variant], urls: dict, key=()) -> list[tuple]:
    """(name, url, variant, scenario, key) of the reference, Django's floor (when ``urls``
    has it) and each variant that runs."""
    targets = [("reference", urls["reference"], None, scenario, key)]
    if FLOOR in urls:
        targets.append((FLOOR, urls[FLOOR], None, scenario, key))  # anonymous: the floor has no keys
    targets += [(v.name, urls["project"], v, scenario, key) for v in variants if not v.unavailable]
    return targets


def _measure_targets(args, loadgen: str, targets: list[tuple]) -> dict[tuple, list[Result]]:
    """``--rounds`` measurements of each target, taken in turns; by (key, name)."""
    rounds: dict[tuple, list[Result]] = {(key, name): [] for name, _, _, _, key in targets}
    for index in range(args.rounds):
        shift = index % len(targets)  # each round starts with another: no one always runs first or last
        for name, url, variant, scenario, key in targets[shift:] + targets[:shift]:
            auth = _authorization(variant, scenario)
            if index == 0:
                _check_answer(url, scenario, auth)
                if args.warmup > 0:
                    _load(args, loadgen, url, scenario, auth, args.warmup)
            rounds[key, name].append(_load(args, loadgen, url, scenario, auth, args.duration))
    return rounds


def _rows(rounds: dict[str, list[Result]], variants: list[Variant]) -> dict[str, Result | None]:
    """The median round of each target, with its median ratios to the reference (and, for
    keys, to anonymous calls)."""
    rows: dict[str, Result | None] = {variant.name: None for variant in variants}
    for name, results in rounds.items():
        rows[name] = sorted(results, key=lambda result: result.rps)[len(results) // 2]
        rows[name].extra["rounds_rps"] = [round(result.rps) for result in results]
    # Ratios are taken round by round, between measurements made a few seconds apart, and
    # their median kept: a slow change in what else the machine runs cancels out.
    for name, results in rounds.items():
        if name != "reference":
            rows[name].extra["ratio"] = _median_ratio(results, rounds["reference"])
            if name != FLOOR and FLOOR in rounds:
                rows[name].extra[FLOOR] = _median_ratio(results, rounds[FLOOR])
            if name not in (FLOOR, "anonymous") and "anonymous" in rounds:
                rows[name].extra["cost"] = 1 - _median_ratio(results, rounds["anonymous"])
    return rows


def _median_ratio(results: list[Result], baseline: list[Result]) -> float:
    ratios = sorted(result.rps / base.rps for result, base in zip(results, baseline, strict=True) if base.rps)
    return statistics.median(ratios) if ratios else 0.0


def _check_answer(url: str, scenario: Scenario, auth: str) -> None:
    """One request before the load: the server must answer 200 with the contract's shape."""
    headers = {"Authorization": auth} if auth else {}
    if scenario.mode == "get":
        reference = scenario.refs.read_text().split("\n", 1)[0]
        request = urllib.request.Request(
            f"{url}/api/trpc/getReceipt?input={quote(json.dumps({'token': reference}))}", headers=headers
        )
    else:
        body = _create_body(scenario).replace("TOKEN", f"bcheck{secrets.token_hex(8)}").encode()
        headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{url}/api/trpc/createReceiptFromPOS", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, data = response.status, json.loads(response.read())["result"]["data"]
    except urllib.error.HTTPError as exc:
        sys.exit(f"{scenario.name} on {url}: {exc.code} {exc.read()[:500]!r}")
    expected = RECEIPT_FIELDS if scenario.mode == "get" else {"id", "token", "short_code", "receipt_url"}
    if status != 200 or set(data) != expected:
        sys.exit(f"{scenario.name} on {url}: unexpected answer {status} {sorted(data)}")


def _load(args, loadgen: str, url: str, scenario: Scenario, auth: str, seconds: float) -> Result:
    run = secrets.token_hex(4)
    body = _create_body(scenario)
    if loadgen == "wrk":
        command = [
            "wrk", "--threads", str(min(2, args.connections)), "--connections", str(args.connections),
            "--duration", f"{max(1, round(seconds))}s", "--timeout", "5s",
            "--script", str(ROOT / "bench" / "wrk.lua"), url,
        ]  # fmt: skip
        env = dict(
            os.environ,
            BENCH_MODE=scenario.mode,
            BENCH_REFS=str(scenario.refs or ""),
            BENCH_AUTH=auth,
            BENCH_RUN=run,
            BENCH_BODY=body,
        )
    else:
        command = [
            PYTHON, str(ROOT / "bench" / "loadgen.py"), url, "--connections", str(args.connections),
            "--duration", str(seconds), "--mode", scenario.mode, "--auth", auth, "--run", run, "--body", body,
        ]  # fmt: skip
        if scenario.refs:
            command += ["--refs", str(scenario.refs)]
        env = dict(os.environ)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 60)
    line = next((line for line in done.stdout.splitlines() if line.startswith("BENCH_RESULT ")), None)
    if done.returncode or line is None:
        sys.exit(f"the load generator failed:\n{done.stdout}{done.stderr}")
    data = json.loads(line.removeprefix("BENCH_RESULT "))
    errors = sum(data[key] for key in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts"))
    return Result(data["requests"], data["duration_us"], data["p50_us"], data["p99_us"], errors, data)


def _create_body(scenario: Scenario) -> str:
    """The createReceiptFromPOS body of ``scenario``, with TOKEN where each request's token goes."""
    return json.dumps({**CREATE_BODY, "merchant_string_id": scenario.merchant}, separators=(",", ":"))


def _git(*command: str) -> str:
    done = subprocess.run(["git", *command], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
