"""What one "Download all my receipts" costs a worker when a shop has flooded a number
with receipts: thousands of sales of hundreds of items each, all sent to one customer.

    python bench/locker_export.py --receipts 2000 --items 500
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/receco_export python bench/locker_export.py --append

It migrates the database DATABASE_URL names (SQLite in a temporary file without it),
makes a merchant of its own (``export-bench``) with ``--receipts`` receipts of ``--items``
items each, all sent to one number, and with ``--append`` appends them to the receipt log
first, so that every file carries its proof. Then, in a fresh process of its own, it signs
in to the locker as the customer does (the form, the code) and downloads everything
through the view, reading the answer as a client would, to a file. It prints the
download's wall and CPU time, how far the process's peak memory (its resident set's high
water mark) rose above what it held before, the zip's size, how many receipts it holds
and their bytes before compression. ``--tracemalloc`` adds Python's own peak (every
allocation traced: slower). ``--json`` prints the figures as one JSON object as well,
last. Unless ``--keep``, what it made is deleted afterwards.
"""

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MERCHANT = "export-bench"
PHONE = "+2348031234567"


def _environment() -> str | None:
    """Set the project's environment; return the temporary folder made for SQLite, if any."""
    made = None
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "receco.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + secrets.token_hex(16))
    os.environ.setdefault("DJANGO_DEBUG", "false")  # debug would keep every query in memory
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,testserver")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    os.environ.setdefault("RECECO_WEB_URL", "http://127.0.0.1:8000")
    if not os.environ.get("REDIS_URL"):
        os.environ.setdefault("RECECO_LOCAL_CACHE", "1")
    if not os.environ.get("DATABASE_URL"):
        made = tempfile.mkdtemp(prefix="export-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{made}/export-bench.sqlite3"
    if not os.environ.get("RECECO_SIGNING_KEYS"):
        sys.path.insert(0, str(ROOT))
        from receco.lib.signingkeys import generate_jwk

        os.environ["RECECO_SIGNING_KEYS"] = json.dumps({"keys": [generate_jwk()]})
    return made


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    if os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://")):
        from bench.servers import create_database

        create_database(os.environ["DATABASE_URL"])
    import django

    django.setup()


def _items(count: int, name_length: int) -> list[dict]:
    return [
        {
            "name": f"Item {n:04d} ".ljust(name_length, "x"),
            "quantity": 1,
            "unit_price": 100,
            "total_price": 100,
            "sku": f"SKU-{n:08d}",
        }
        for n in range(count)
    ]


def seed(args) -> None:
    """The flood: ``args.receipts`` receipts of ``args.items`` items, all sent to PHONE."""
    from django.core.management import call_command
    from django.utils import timezone

    from merchants.models import Merchant
    from receipts.models import Receipt

    call_command("migrate", verbosity=0)
    merchant, _ = Merchant.objects.get_or_create(string_id=MERCHANT, defaults={"name": "Export Bench Shop"})
    if Receipt.objects.filter(merchant=merchant).count() == args.receipts:
        return
    clean()
    merchant = Merchant.objects.create(string_id=MERCHANT, name="Export Bench Shop")
    items = _items(args.items, args.name_length)
    sold = timezone.now() - timedelta(days=1)
    started = time.perf_counter()
    for first in range(0, args.receipts, 200):
        Receipt.objects.bulk_create(
            Receipt(
                token=f"rcpt_xbench_{n:010d}",
                short_code=f"X{n:05d}",
                merchant=merchant,
                merchant_name="Export Bench Shop",
                accent_color="#c2410c",
                total_amount=100 * args.items,
                currency="NGN",
                transaction_date=sold - timedelta(seconds=n),
                items=items,
                payment_method="card",
                customer_phone=PHONE,
                fingerprint="0" * 64,
            )
            for n in range(first, min(first + 200, args.receipts))
        )
    print(f"made {args.receipts} receipts of {args.items} items in {time.perf_counter() - started:.1f} s")
    if args.append:
        from ledger.appender import append_batch

        started = time.perf_counter()
        Receipt.objects.filter(merchant=merchant).update(created_at=sold)  # past the appender's commit lag
        while append_batch(500, checkpoint=False).count:
            pass
        append_batch(500, checkpoint=True)
        print(f"appended them to the log in {time.perf_counter() - started:.1f} s")


def clean() -> None:
    from ledger.models import Leaf
    from merchants.models import Merchant
    from receipts.models import Receipt

    merchant = Merchant.objects.filter(string_id=MERCHANT).first()
    if merchant is None:
        return
    ids = list(Receipt.objects.filter(merchant=merchant).values_list("id", flat=True))
    for start in range(0, len(ids), 10_000):
        Leaf.objects.filter(receipt_id__in=ids[start : start + 10_000]).delete()
        Receipt.objects.filter(id__in=ids[start : start + 10_000]).delete()
    merchant.delete()


def _memory_kib(field: str) -> int:
    """This process's ``VmRSS`` (resident memory now) or ``VmHWM`` (its peak), in KiB, as
    Linux counts them. Not getrusage's ru_maxrss: that one is carried over exec from the
    parent that forked this process, which held the seeded receipts."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(args) -> dict:
    """Sign in as the customer, download everything, and say what it cost."""
    import tracemalloc

    from django.test import Client

    from locker import signins
    from locker.models import SignIn

    client = Client()
    asked = client.post("/app/my/start", {"contact": PHONE}, REMOTE_ADDR="198.51.100.1")
    assert asked.status_code == 302, asked.status_code
    signed = client.post("/app/my/code", {"code": signins.code_of(SignIn.objects.latest("pk"))})
    assert signed.status_code == 302, signed.status_code
    assert signed["Location"] == "/app/my", signed["Location"]

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.zip"
        before = _memory_kib("VmRSS")
        if args.tracemalloc:
            tracemalloc.start()
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.post("/app/my/download")
        assert response.status_code == 200, response.status_code
        with path.open("wb") as file:
            for chunk in response.streaming_content if response.streaming else [response.content]:
                file.write(chunk)
        wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
        traced = tracemalloc.get_traced_memory()[1] if args.tracemalloc else None
        tracemalloc.stop()
        peak = _memory_kib("VmHWM")
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
            files = [info for info in archive.infolist() if info.filename.endswith(".orf.json")]
            last_line = archive.read("receipts.csv").decode("utf-8").rstrip("\r\n").rsplit("\r\n", 1)[-1]
        return {
            "receipts": args.receipts,
            "items": args.items,
            "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "memory_growth_mib": round((peak - before) / 1024, 1),
            "traced_peak_mib": round(traced / 2**20, 1) if traced is not None else None,
            "zip_mib": round(path.stat().st_size / 2**20, 2),
            "receipts_in_zip": len(files),
            "uncompressed_mib": round(sum(info.file_size for info in files) / 2**20, 1),
            "csv_last_line": last_line,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--receipts", type=int, default=2000)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--name-length", type=int, default=40, help="characters of each item's name")
    parser.add_argument("--append", action="store_true", help="append the receipts to the log first")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python's allocations (slower)")
    parser.add_argument("--keep", action="store_true", help="keep the receipts made (and reuse them next time)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object too, last")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # the fresh process
    args = parser.parse_args()
    made = _environment()
    try:
        _setup()
        if args.measure:
            print(json.dumps(measure(args)))
            return
        seed(args)
        child = subprocess.run(
            [sys.executable, __file__, "--measure", *sys.argv[1:]], capture_output=True, text=True, check=False
        )
        if child.returncode:
            sys.exit(f"the download failed:\n{child.stdout}{child.stderr}")
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        if not args.keep:
            clean()
    finally:
        if made:  # the SQLite database of this run alone
            shutil.rmtree(made, ignore_errors=True)
    traced = f", Python's own peak {figures['traced_peak_mib']} MiB" if args.tracemalloc else ""
    print(f"database: {os.environ['DATABASE_URL'].split(':', 1)[0]}; {args.receipts} receipts of {args.items} items")
    print(
        f"download: {figures['wall_seconds']} s wall, {figures['cpu_seconds']} s CPU; "
        f"peak memory {figures['memory_growth_mib']} MiB above what the process held before{traced}"
    )
    print(
        f"zip: {figures['zip_mib']} MiB, {figures['receipts_in_zip']} receipts, "
        f"{figures['uncompressed_mib']} MiB of files before compression"
    )
    print(f"the CSV's last line: {figures['csv_last_line']}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
