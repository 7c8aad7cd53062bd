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
import json
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.servers import (  # noqa: E402
    PYTHON,
    ROOT,
    database_url,
    load_average,
    project_env,
    serve,
    stop,
    wait_until_up,
)
from bench.workload import (  # noqa: E402
    CREATE_SCENARIO,
    HOOKED_SCENARIO,
    Scenario,
    Variant,
    authorization,
    check_answer,
    count_label,
    create_body,
    delete_created,
    draw_scenarios,
    make_variants,
    prepare_database,
    seeding_merchants,
)

FLOOR = "floor"  # Django's floor, among the rows of a scenario
FLOOR_LABEL = "Django's floor (no middleware)"


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
    print_goals(args, results)
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
    for name, what in (("project", "the project"), ("reference", "the bare reference"), (FLOOR, "Django's floor")):
        parser.add_argument(
            f"--{name}-url",
            help=f"{what} already served there, on the database this run prepares and with this environment's"
            " DJANGO_SECRET_KEY (the keys it makes are read under it), instead of a server of the run's own (one"
            " receipt count only; the tests' smoke runs share one set of servers so)",
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
    if _given_urls(args) and len(args.receipts) > 1:
        parser.error("--project-url, --reference-url and --floor-url serve one receipt count: give one --receipts")
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
    with psycopg.connect(database_url(args.database_url, "postgres")) as connection:
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
        *[f"  given     {name} served at {url} (not started by this run)" for name, url in _given_urls(args).items()],
        f"  load      {wrk_version if loadgen == 'wrk' else 'bench/loadgen.py (Python threads)'}, "
        f"{args.connections} connections, on loopback",
        f"  method    per scenario: {args.warmup:g} s warm-up, then {args.rounds} rounds of {args.duration:g} s, the"
        " reference, the floor and each variant taking turns; the median round is shown, and the median of the"
        " rounds' ratios",
        f"  load avg  {load_average()} before the run (other processes on the machine disturb the figures)",
    ]
    return "\n".join(lines)


def print_row(label: str, result: Result | None, note: str = "") -> None:
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


def print_goals(args, results: dict[int, dict]) -> None:
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
    name = f"{args.database_prefix}_{count_label(count)}"
    url = database_url(args.database_url, name)
    print(f"\n{count:,} receipts (database {name})", flush=True)
    prepare_database(args, url, count, seeding_merchants(max(args.receipts)))
    workdir = Path(tempfile.mkdtemp(prefix="receco-bench-"))
    scenarios = draw_scenarios(url, workdir)
    urls = {
        "project": f"http://127.0.0.1:{args.port}",
        "reference": f"http://127.0.0.1:{args.port + 1}",
        FLOOR: f"http://127.0.0.1:{args.port + 2}",
    } | _given_urls(args)
    project_url = urls["project"]
    env = project_env(args, url, project_url)
    servers = _serve(args, urls, env, workdir)
    table: dict[str, dict[str, Result | None]] = {}
    try:
        for server in servers:
            wait_until_up(server)
        variants = make_variants(args, url, env)
        print(
            f"  {'scenario':<38} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'of ref':>8} {'of floor':>8}\n"
            "  (of floor: the share of Django's floor, which has no keys: a keyed call is compared with its one,"
            " anonymous, figure)",
            flush=True,
        )
        for scenario in scenarios:
            if args.only and not any(word in scenario.name for word in args.only):
                continue
            table[scenario.name] = rows = measure_scenario(args, loadgen, scenario, variants, urls)
            print(f"  {scenario.name}", flush=True)
            print_row("  bare reference (WSGI + psycopg)", rows["reference"])
            print_row(f"  {FLOOR_LABEL}", rows[FLOOR])
            for variant in variants:
                print_row(f"  {variant.name}", rows[variant.name], variant.unavailable or "")
    finally:
        for server in servers:
            stop(server)
    delete_created(url)
    return table


def _bench_interleaved(args, loadgen: str) -> dict[int, dict]:
    """Every receipt count's database served at once and measured in the same rounds."""
    opened, servers = [], []
    try:
        for index, count in enumerate(args.receipts):
            name = f"{args.database_prefix}_{count_label(count)}"
            url = database_url(args.database_url, name)
            print(f"\n{count:,} receipts (database {name})", flush=True)
            prepare_database(args, url, count, seeding_merchants(max(args.receipts)))
            workdir = Path(tempfile.mkdtemp(prefix="receco-bench-"))
            port = args.port + 2 * index
            urls = {"project": f"http://127.0.0.1:{port}", "reference": f"http://127.0.0.1:{port + 1}"}
            urls |= {name: given for name, given in _given_urls(args).items() if name != FLOOR}
            env = project_env(args, url, urls["project"])
            pair = _serve(args, urls, env, workdir)
            servers += pair
            for server in pair:
                wait_until_up(server)
            opened.append((count, url, draw_scenarios(url, workdir), make_variants(args, url, env), urls))
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
                print_row(f"  {count:,}: bare reference", rows["reference"])
                for variant in variants:
                    print_row(f"  {count:,}: {variant.name}", rows[variant.name], variant.unavailable or "")
            _print_between_counts(opened, rounds)
    finally:
        for server in servers:
            stop(server)
        for _, url, *_ in opened:
            delete_created(url)
    return results


# The WSGI applications served, by name.
APPS = {
    "project": "receco.wsgi:application",
    "reference": "bench.reference:application",
    FLOOR: "bench.floor.wsgi:application",
}


def _given_urls(args) -> dict[str, str]:
    """The servers the run was given (--project-url, ...), by name: it starts none of them."""
    return {name: url for name in APPS if (url := getattr(args, f"{name}_url", None))}


def _serve(args, urls: dict[str, str], env: dict, workdir: Path) -> list:
    """The servers of ``urls`` the run was not given, started on their ports."""
    given = _given_urls(args)
    return [
        serve(args, app, int(urls[name].rsplit(":", 1)[1]), env, workdir / f"{name}.log")
        for name, app in APPS.items()
        if name in urls and name not in given
    ]


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
            f" (load average {load_average()})",
            flush=True,
        )


def _gunicorn_version() -> str:
    done = subprocess.run([PYTHON, "-m", "gunicorn", "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).split()[-1].strip("()") if done.returncode == 0 else "?"


# -- load --------------------------------------------------------------------------------


def measure_scenario(args, loadgen: str, scenario: Scenario, variants: list[Variant], urls: dict):
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
            auth = authorization(variant, scenario)
            if index == 0:
                check_answer(url, scenario, auth)
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


def _load(args, loadgen: str, url: str, scenario: Scenario, auth: str, seconds: float) -> Result:
    run = secrets.token_hex(4)
    body = create_body(scenario)
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


def _git(*command: str) -> str:
    done = subprocess.run(["git", *command], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
