"""The dashboard's "Find a sale" on a busy shop: how long the receipts list takes to answer
a search (its count, its first page and the page itself, in-process through the test
client), with item names searched and, for comparison, without them (as before they were).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/receco_search python bench/search.py --receipts 200000

It migrates the database named by DATABASE_URL (SQLite in a temporary file without it), makes
a shop of its own (``search-bench``) with ``--receipts`` seeded sales (``seedreceipts``: one
to five items of a catalogue, card digits, contacts) unless it holds them already, signs in
as a member of it and asks the list for each term ``--rounds`` times, printing the median and the
slowest, and the median time in the database's queries. On PostgreSQL a word of an item
is an index look-up (receipts/migrations/0013); the list counts what a search found up to
1,000 (dashboard.search.COUNTED). Run it on a database of its own: it keeps what
it made for the next run.
"""

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.inprocess import prepare  # noqa: E402

prepare("search")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings  # noqa: E402

from dashboard.admin import receipts as receipts_admin  # noqa: E402
from merchants.models import Merchant, MerchantMembership  # noqa: E402
from receipts.models import Receipt  # noqa: E402

SHOP = "search-bench"
# What an owner types at the counter: a popular item, a rare word of one, a word of none,
# a card's last four, an amount, a phone number.
TERMS = ["jollof", "semovita", "couscous", "4242", "1,300.00", "0803 123 4567"]


def shop(receipts: int) -> Merchant:
    merchant, _ = Merchant.objects.get_or_create(string_id=SHOP, defaults={"name": "Search Bench Kitchen"})
    held = Receipt.objects.filter(merchant=merchant).count()
    if held < receipts:
        started = time.perf_counter()
        call_command("seedreceipts", SHOP, str(receipts - held), verbosity=0)
        print(f"seeded {receipts - held} receipts in {time.perf_counter() - started:.1f} s")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE receipts_receipt")
    return merchant


def member(merchant: Merchant) -> User:
    user, made = User.objects.get_or_create(username="search-bench-member", defaults={"is_staff": True})
    if made:  # a member: no second step to take
        MerchantMembership.objects.create(user=user, merchant=merchant, role="member")
    return user


def timed(client: Client, term: str, rounds: int) -> tuple[float, float, int, float]:
    """The median and slowest request, what it found, and the median time in its queries
    (the database's part: the rest renders the page, a hundred rows at most)."""
    times, in_queries = [], []
    for _ in range(rounds):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get("/admin/receipts/receipt/", {"q": term}, secure=True)
            times.append((time.perf_counter() - started) * 1000)
        in_queries.append(sum(float(query["time"]) for query in queries.captured_queries) * 1000)
        assert response.status_code == 200, (term, response.status_code, response.get("Location"))
    # "more than 1000 results" past what a search counts (dashboard.search.COUNTED): 1001 here.
    found = re.search(r'<span class="small quiet">(more than )?(\d+) results?', response.content.decode())
    count = int(found[2]) + bool(found[1]) if found else 0
    return statistics.median(times), max(times), count, statistics.median(in_queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--receipts", type=int, default=200_000, help="the shop's sales (default 200,000)")
    parser.add_argument("--rounds", type=int, default=5, help="requests a term and a way (default 5)")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    merchant = shop(args.receipts)
    client = Client()
    client.force_login(member(merchant))
    held = Receipt.objects.filter(merchant=merchant).count()
    print(f"database: {connection.vendor}; shop of {held} receipts; {args.rounds} requests a term")
    searched = receipts_admin.items_searched
    for term in TERMS:
        figures = {}
        for way, items in (("without items", False), ("with items", True)):
            receipts_admin.items_searched = lambda request, items=items: items
            figures[way] = timed(client, term, args.rounds)
        receipts_admin.items_searched = searched
        before, after = figures["without items"], figures["with items"]
        print(
            f"{term!r}: without items p50 {before[0]:.1f} ms (max {before[1]:.1f}, queries {before[3]:.1f}, "
            f"{before[2]} found); with items p50 {after[0]:.1f} ms (max {after[1]:.1f}, queries {after[3]:.1f}, "
            f"{after[2]} found)"
        )


if __name__ == "__main__":
    # The pages name their static files without the manifest that collectstatic would write.
    plain = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    with override_settings(STORAGES=plain):
        main()
