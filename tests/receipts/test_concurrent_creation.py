"""Concurrent duplicates make one receipt: the database's unique constraints decide (on
SQLite too: the test database is a file, so each thread has its own connection)."""

import json
import threading

import pytest
from django.db import connection
from django.test import Client

from merchants.models import Merchant
from receipts.models import Receipt

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 8


def _post_concurrently(body: dict) -> list[tuple[int, dict]]:
    barrier = threading.Barrier(WORKERS)
    results = []
    lock = threading.Lock()

    def worker():
        client = Client()
        barrier.wait(timeout=10)
        try:
            response = client.post("/api/trpc/createReceiptFromPOS", json.dumps(body), content_type="application/json")
            with lock:
                results.append((response.status_code, json.loads(response.content)))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_concurrent_duplicates_create_one_receipt(sale):
    results = _post_concurrently(sale)
    assert [status for status, _ in results] == [200] * WORKERS
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1
    assert Receipt.objects.filter(token=sale["token"]).count() == 1


def test_concurrent_first_sales_of_a_test_merchant_create_it_once(sale):
    sale["merchant_string_id"] = "test-brand-new"
    results = _post_concurrently(sale)
    assert [status for status, _ in results] == [200] * WORKERS
    assert Merchant.objects.filter(string_id="test-brand-new").count() == 1
    assert Receipt.objects.count() == 1


def test_concurrent_conflicting_sales_keep_the_first(sale):
    barrier = threading.Barrier(2)
    statuses = []

    def worker(amount):
        barrier.wait(timeout=10)
        try:
            body = {**sale, "total_amount": amount}
            response = Client().post(
                "/api/trpc/createReceiptFromPOS", json.dumps(body), content_type="application/json"
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(amount,)) for amount in (100, 200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(statuses) == [200, 409]
    assert Receipt.objects.filter(token=sale["token"]).count() == 1
