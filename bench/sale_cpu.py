"""CPU per sale in-process: ``create_receipt`` for a merchant without webhook endpoints
and for one with an endpoint, with the database task backend as in production.

Measures ``time.process_time`` (this process's CPU: Python, the ORM, psycopg; not
PostgreSQL's) and wall time per sale, the two merchants taking turns in blocks so that
the machine's other load falls on both alike. ``--profile`` prints cProfile's top
functions for the sales with an endpoint instead.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/receco_whfast REDIS_URL=redis://127.0.0.1:6379/9 \\
      python bench/sale_cpu.py --sales 300

It migrates the database named by DATABASE_URL, makes two merchants of its own
(``cpu-plain``, ``cpu-hooked``) and deletes the receipts, events and tasks it made.
"""

import argparse
import cProfile
import os
import pstats
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "receco.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + secrets.token_hex(16))
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1")
os.environ.setdefault("RECECO_WEB_URL", "http://127.0.0.1:8000")
os.environ["RECECO_TASKS_BACKEND"] = "database"

from bench.servers import create_database  # noqa: E402

if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
    create_database(os.environ["DATABASE_URL"])  # made on first use, as bench/ledger.py's

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.workload import CREATE_BODY  # noqa: E402
from merchants.models import Merchant  # noqa: E402
from receipts.creation import create_receipt  # noqa: E402
from receipts.models import Receipt  # noqa: E402
from receipts.validation import validate_sale  # noqa: E402
from webhooks.models import Endpoint  # noqa: E402

# The sale bench/run.py sends; its token, short code and merchant are set per sale below.
SALE = {**CREATE_BODY, "merchant_name": "CPU"}


def _merchant(string_id: str, hooked: bool) -> Merchant:
    merchant, _ = Merchant.objects.get_or_create(
        string_id=string_id, defaults={"name": string_id, "require_api_key": False}
    )
    if hooked and not Endpoint.objects.filter(merchant=merchant).exists():
        Endpoint.objects.create(merchant=merchant, url="https://hooks.bench.invalid/cpu", secret="whsec_cpu")  # noqa: S106 (a benchmark's)
    return Merchant.objects.get(pk=merchant.pk)  # a fresh object: its endpoints are asked once, as in a process


def _sell(merchant: Merchant, count: int) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for _ in range(count):
        sale = validate_sale({**SALE, "token": "", "short_code": "", "merchant_string_id": merchant.string_id})
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        create_receipt(merchant, sale)
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started_wall)
    return cpu, wall


def _cleanup(merchants: list[Merchant]) -> None:
    ids = [merchant.pk for merchant in merchants]
    with connection.cursor() as cursor:
        deliveries = "SELECT id FROM messaging_delivery WHERE merchant_id = ANY(%s)"
        cursor.execute(f"DELETE FROM webhooks_attempt WHERE delivery_id IN ({deliveries})", [ids])
        cursor.execute("DELETE FROM messaging_delivery WHERE merchant_id = ANY(%s)", [ids])
        cursor.execute("DELETE FROM webhooks_event WHERE merchant_id = ANY(%s)", [ids])
        cursor.execute("DELETE FROM django_tasks_database_dbtaskresult WHERE task_path LIKE 'messaging.%%'")
    Receipt.objects.filter(merchant_id__in=ids).delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sales", type=int, default=300, help="sales per merchant (default 300)")
    parser.add_argument("--block", type=int, default=50, help="sales per turn (default 50)")
    parser.add_argument("--profile", action="store_true", help="profile the sales with an endpoint")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("set DATABASE_URL=postgres://...")
    call_command("migrate", verbosity=0)
    plain, hooked = _merchant("cpu-plain", False), _merchant("cpu-hooked", True)
    try:
        _sell(plain, 30)  # warm-up: compiled queries, connections, caches
        _sell(hooked, 30)
        if args.profile:
            profile = cProfile.Profile(time.process_time)  # CPU, not waiting
            profile.enable()
            _sell(hooked, args.sales)
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
            return
        results = {"without an endpoint": ([], []), "with an endpoint": ([], [])}
        done = 0
        while done < args.sales:
            block = min(args.block, args.sales - done)
            for name, merchant in (("without an endpoint", plain), ("with an endpoint", hooked)):
                cpu, wall = _sell(merchant, block)
                results[name][0].extend(cpu)
                results[name][1].extend(wall)
            done += block
        print(f"load average {' '.join(f'{n:.2f}' for n in os.getloadavg())}; {args.sales} sales each")
        means = {}
        for name, (cpu, wall) in results.items():
            means[name] = statistics.fmean(cpu)
            print(
                f"  {name:<20} CPU mean {statistics.fmean(cpu) * 1000:.2f} ms,"
                f" median {statistics.median(cpu) * 1000:.2f} ms; wall median {statistics.median(wall) * 1000:.2f} ms,"
                f" mean {statistics.fmean(wall) * 1000:.2f} ms"
            )
        print(f"  CPU ratio with/without: {means['with an endpoint'] / means['without an endpoint']:.2f}")
    finally:
        _cleanup([plain, hooked])


if __name__ == "__main__":
    main()
