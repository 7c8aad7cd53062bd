"""The receipt log's cost: how many receipts a second the appender signs and appends in
batches, and how long a receipt's proof bundle takes to serve once the log is large.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/receco_ledger python bench/ledger.py --receipts 200000

It migrates the database named by DATABASE_URL (SQLite in a temporary file without it),
makes a merchant of its own (``ledger-bench``) and ``--receipts`` receipts for it, appends
them all timing only the appender (``--batch`` a transaction), then fetches ``--proofs``
proof bundles of random receipts through the view (GET /log/proof/<token>, in-process:
the ORM, the tree look-up, the JSON) and prints the percentiles. With ``--keep`` the rows
stay for another run; otherwise it deletes what it made (the log's tables included: run it
on a database of its own).
"""

import argparse
import cProfile
import json
import os
import pstats
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.inprocess import prepare  # noqa: E402

prepare("ledger")

from receco.lib.signingkeys import generate_jwk  # noqa: E402

os.environ["RECECO_SIGNING_KEYS"] = json.dumps({"keys": [generate_jwk()]})

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from ledger.appender import append_batch  # noqa: E402
from ledger.models import Checkpoint, Head, Leaf, Node  # noqa: E402
from merchants.models import Merchant  # noqa: E402
from receipts.models import Receipt  # noqa: E402

ITEMS = [
    {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
    {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
]
DETAILS = {
    "subtotal_amount": 130000,
    "tax_lines": [{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
    "payment_details": {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
}


def make_receipts(merchant: Merchant, count: int, first: int = 0) -> None:
    made_at = timezone.now() - timedelta(minutes=5)
    for start in range(first, first + count, 10_000):
        Receipt.objects.bulk_create(
            [
                Receipt(
                    token=f"rcpt_lbench_{start + i:010d}",
                    short_code=f"{start + i:06X}"[-6:],
                    merchant=merchant,
                    merchant_name="Ledger Bench Kitchen",
                    accent_color="#c2410c",
                    total_amount=130000,
                    currency="NGN",
                    transaction_date=made_at,
                    items=ITEMS,
                    payment_method="card",
                    location="Lekki Phase 1",
                    details=DETAILS,
                    fingerprint="0" * 64,
                    created_at=made_at,
                )
                for i in range(min(10_000, first + count - start))
            ]
        )
    # auto_now_add ignores the value given: age the rows past the appender's commit lag.
    Receipt.objects.filter(merchant=merchant).update(created_at=made_at)


def clean(merchant: Merchant) -> None:
    for model in (Leaf, Node, Checkpoint, Head):
        model.objects.all().delete()
    # In slices: deleting receipts deletes their set asides and voids by their ids, and
    # PostgreSQL takes at most 65,535 parameters a query.
    ids = list(Receipt.objects.filter(merchant=merchant).values_list("id", flat=True))
    for start in range(0, len(ids), 10_000):
        Receipt.objects.filter(id__in=ids[start : start + 10_000]).delete()
    merchant.delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--receipts", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--proofs", type=int, default=2000)
    parser.add_argument("--keep", action="store_true", help="keep the rows made (and reuse them next time)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions of the appender")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    merchant, _ = Merchant.objects.get_or_create(string_id="ledger-bench", defaults={"name": "Ledger Bench"})
    if Leaf.objects.exclude(receipt__merchant=merchant).exists():
        sys.exit("The log holds other merchants' receipts: run the benchmark on a database of its own")
    have = Receipt.objects.filter(merchant=merchant).count()
    if have < args.receipts:
        started = time.perf_counter()
        make_receipts(merchant, args.receipts - have, first=have)
        print(f"made {args.receipts - have} receipts in {time.perf_counter() - started:.1f} s")

    print(f"database: {connection.vendor}; batch {args.batch}")
    appended, batches, spent, cpu = 0, [], 0.0, 0.0
    now = timezone.now() + timedelta(minutes=1)
    profile = cProfile.Profile() if args.profile else None
    while True:
        started, started_cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        result = append_batch(args.batch, now=now, checkpoint=False)
        if profile:
            profile.disable()
        elapsed = time.perf_counter() - started
        cpu += time.process_time() - started_cpu
        if not result.count:
            break
        appended += result.count
        spent += elapsed
        batches.append(result.count / elapsed)
    append_batch(args.batch, now=now, checkpoint=True)
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    size = Head.objects.get().size
    if appended:
        print(
            f"appended {appended} receipts in {spent:.1f} s: {appended / spent:.0f} receipts/s "
            f"(batches: median {statistics.median(batches):.0f}/s, slowest {min(batches):.0f}/s); log size {size}"
        )
        print(
            f"  this process's CPU: {cpu / appended * 1e6:.0f} us a receipt, "
            f"{appended / cpu:.0f} receipts per CPU second (load average {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} CPUs: the wall figure is what the others left over)"
        )

    tokens = list(Receipt.objects.filter(merchant=merchant).values_list("token", flat=True)[:200_000])
    client = Client()
    client.get(f"/log/proof/{tokens[0]}")  # warm: connection, caches
    times, cpu_times = [], []
    for token in random.sample(tokens, min(args.proofs, len(tokens))):
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(f"/log/proof/{token}")
        times.append((time.perf_counter() - started) * 1000)
        cpu_times.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200, response.content
    cpu_times.sort()
    times.sort()
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print(
        f"proof bundles over a log of {size}: p50 {p(0.5):.2f} ms, p90 {p(0.9):.2f} ms, "
        f"p99 {p(0.99):.2f} ms, max {times[-1]:.2f} ms ({len(times)} requests)"
    )
    print(
        f"  this process's CPU a request: p50 {cpu_times[len(cpu_times) // 2]:.2f} ms, "
        f"p99 {cpu_times[min(len(cpu_times) - 1, int(0.99 * len(cpu_times)))]:.2f} ms"
    )
    if not args.keep:
        clean(merchant)


if __name__ == "__main__":
    main()
