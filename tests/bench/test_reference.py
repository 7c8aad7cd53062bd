"""The benchmark's bare reference (bench/reference.py) does the service's work: it reads
the receipt the service reads and stores a sale the service can read back."""

import json
from urllib.parse import quote

import orjson
import pytest

from tests.bench.conftest import call

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _call(app, method: str, path: str, query: str = "", body: bytes = b"") -> tuple[str, dict]:
    """The status line and the body, read as JSON."""
    status, content = call(app, method, path, query, body)
    return status, orjson.loads(content)


def test_it_reads_the_receipt_the_service_reads(reference_app, api, receipt_factory):
    receipt = receipt_factory()
    query = "input=" + quote(json.dumps({"token": f" {receipt.short_code.lower()} "}))
    status, body = _call(reference_app, "GET", "/api/trpc/getReceipt", query)
    assert status == "200 OK"
    served = api.get("getReceipt", {"token": receipt.token})[1]["result"]["data"]
    data = body["result"]["data"]
    assert set(data) == set(served)
    for field in ("id", "token", "short_code", "merchant_id", "merchant_name", "total_amount", "currency", "items"):
        assert data[field] == served[field]
    for field in ("receipt_number", "title", "merchant_registration_number"):
        assert data[field] == served[field]


def test_it_stores_a_sale_the_service_reads(reference_app, api, sale):
    status, body = _call(reference_app, "POST", "/api/trpc/createReceiptFromPOS", body=json.dumps(sale).encode())
    assert status == "200 OK"
    created = body["result"]["data"]
    assert set(created) == {"id", "token", "short_code", "receipt_url"}
    served = api.get("getReceipt", {"token": created["token"]})[1]["result"]["data"]
    assert served["id"] == created["id"]
    assert served["total_amount"] == sale["total_amount"]


def test_it_numbers_a_sale_as_the_service_does(reference_app, api, sale, receipt_factory):
    """The yardstick does the work the service does: the next number of the merchant's series."""
    first = receipt_factory(token="rcpt_service01_aaaaaa", short_code=None)
    body = json.dumps({**sale, "token": "rcpt_referenc_bbbbbb", "short_code": None}).encode()
    status, answer = _call(reference_app, "POST", "/api/trpc/createReceiptFromPOS", body=body)
    assert status == "200 OK"
    served = api.get("getReceipt", {"token": answer["result"]["data"]["token"]})[1]["result"]["data"]
    assert served["receipt_number"] == first.receipt_number.replace("-000001", "-000002")


def test_an_unknown_receipt_is_a_404(reference_app):
    status, _ = _call(reference_app, "GET", "/api/trpc/getReceipt", "input=" + quote('{"token": "ZZZZZ9"}'))
    assert status == "404 Not Found"
