"""Receipt numbers under concurrent writers: 8 threads, each with its own PostgreSQL
connection, make sales (the merchant's series and two tills'), refunds and agent-style
uploads (with their replays and refused retries) at once; every series comes out gapless
and without repeats. On SQLite the database takes one writer at a time, which proves
nothing about concurrency: the test needs PostgreSQL."""

import json
import threading
from collections import defaultdict

import pytest
from django.db import connection
from django.test import Client

from receco.errors import Conflict
from receipts.creation import create_receipt
from receipts.models import Receipt, ReceiptSeries
from receipts.refunds import refund, validate_refund
from receipts.validation import validate_sale

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WORKERS = 8
ROUNDS = 12
TO_REFUND = 16


def test_eight_concurrent_writers_leave_every_series_gapless(merchant, sale):
    merchant.receipt_prefix = "MP"
    merchant.save()

    def sale_of(token: str, **overrides) -> dict:
        return {**sale, "token": token, "short_code": None, **overrides}

    refundable = [
        create_receipt(merchant, validate_sale(sale_of(f"rcpt_refundable_{n:04d}")), keyed=True).receipt
        for n in range(TO_REFUND)
    ]
    barrier = threading.Barrier(WORKERS)
    failures, refused = [], []
    lock = threading.Lock()

    def worker(w: int) -> None:
        client = Client()
        try:
            barrier.wait(timeout=30)
            for r in range(ROUNDS):
                token = f"rcpt_worker{w}_{r:06d}"
                kind = (w + r) % 4
                if kind == 0:  # the merchant's series; every other one sent to a customer (a hook)
                    email = "customer@example.com" if r % 2 else None
                    create_receipt(merchant, validate_sale(sale_of(token, customer_email=email)), keyed=True)
                elif kind == 1:  # two tills' series, shared by the workers
                    create_receipt(merchant, validate_sale(sale_of(token, terminal_id=f"Till {w % 2}")), keyed=True)
                elif kind == 2:  # a refund, in the merchant's series, of a sale two workers refund
                    target = refundable[(w + r) % TO_REFUND]
                    refund(target, validate_refund({"token": target.token, "amount": 100}), keyed=True)
                else:  # the agent: an upload, its retry (a replay) and a retry that is refused (409)
                    body = sale_of(token, short_code=f"W{w}R{r:03d}", terminal_id="agent-1")
                    for attempt in (body, body, {**body, "total_amount": 1}):
                        response = client.post(
                            "/api/trpc/createReceiptFromPOS", json.dumps(attempt), content_type="application/json"
                        )
                        if response.status_code == 409:
                            with lock:
                                refused.append(token)
                        elif response.status_code != 200:
                            raise AssertionError(response.content)
        except Conflict as exc:  # not expected: every refund is within what remains
            with lock:
                failures.append(repr(exc))
        except Exception as exc:  # noqa: BLE001 (reported below, with the worker)
            with lock:
                failures.append(f"worker {w}: {exc!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert len(refused) == WORKERS * ROUNDS // 4  # each upload's conflicting retry, and it took no number

    numbers = defaultdict(list)
    for series, number in Receipt.objects.filter(merchant=merchant).values_list("number_series", "number"):
        numbers[series].append(number)
    year = refundable[0].number_series.split("-")[-1]
    expected = {
        f"MP-{year}": TO_REFUND + WORKERS * ROUNDS // 4 * 2,  # the sales to refund, sales, refunds
        f"MP-TILL0-{year}": WORKERS * ROUNDS // 4 // 2,
        f"MP-TILL1-{year}": WORKERS * ROUNDS // 4 // 2,
        f"MP-AGENT1-{year}": WORKERS * ROUNDS // 4,
    }
    assert {series: len(found) for series, found in numbers.items()} == expected
    for series, found in numbers.items():
        assert sorted(found) == list(range(1, len(found) + 1)), series  # gapless, no repeats
    lasts = dict(ReceiptSeries.objects.filter(merchant=merchant).values_list("name", "last"))
    assert lasts == expected  # the counters gave no number that no receipt holds
