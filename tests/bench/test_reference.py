"""The benchmark's bare reference (bench/reference.py) does the service's work: it reads
the receipt the service reads and stores a sale the service can read back."""

import json
import threading
from io import BytesIO
from urllib.parse import quote

import orjson
import pytest
from django.db import connection

from bench import reference

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def app(monkeypatch):
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    monkeypatch.setattr(reference, "_DATABASE_URL", url)
    monkeypatch.setattr(reference, "_local", threading.local())
    yield reference.application
    opened = getattr(reference._local, "connection", None)
    if opened is not None:
        opened.close()


def _call(app, method: str, path: str, query: str = "", body: bytes = b"") -> tuple[str, dict]:
    answer = {}
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": BytesIO(body),
    }
    content = b"".join(app(environ, lambda status, headers: answer.update(status=status)))
    return answer["status"], orjson.loads(content)


def test_it_reads_the_receipt_the_service_reads(app, api, receipt_factory):
    receipt = receipt_factory()
    query = "input=" + quote(json.dumps({"token": f" {receipt.short_code.lower()} "}))
    status, body = _call(app, "GET", "/api/trpc/getReceipt", query)
    assert status == "200 OK"
    served = api.get("getReceipt", {"token": receipt.token})[1]["result"]["data"]
    data = body["result"]["data"]
    assert set(data) == set(served)
    for field in ("id", "token", "short_code", "merchant_id", "merchant_name", "total_amount", "currency", "items"):
        assert data[field] == served[field]
    for field in ("receipt_number", "title", "merchant_registration_number"):
        assert data[field] == served[field]


def test_it_stores_a_sale_the_service_reads(app, api, sale):
    status, body = _call(app, "POST", "/api/trpc/createReceiptFromPOS", body=json.dumps(sale).encode())
    assert status == "200 OK"
    created = body["result"]["data"]
    assert set(created) == {"id", "token", "short_code", "receipt_url"}
    served = api.get("getReceipt", {"token": created["token"]})[1]["result"]["data"]
    assert served["id"] == created["id"]
    assert served["total_amount"] == sale["total_amount"]


def test_it_numbers_a_sale_as_the_service_does(app, api, sale, receipt_factory):
    """The yardstick does the work the service does: the next number of the merchant's series."""
    first = receipt_factory(token="rcpt_service01_aaaaaa", short_code=None)
    body = json.dumps({**sale, "token": "rcpt_referenc_bbbbbb", "short_code": None}).encode()
    status, answer = _call(app, "POST", "/api/trpc/createReceiptFromPOS", body=body)
    assert status == "200 OK"
    served = api.get("getReceipt", {"token": answer["result"]["data"]["token"]})[1]["result"]["data"]
    assert served["receipt_number"] == first.receipt_number.replace("-000001", "-000002")


def test_an_unknown_receipt_is_a_404(app):
    status, _ = _call(app, "GET", "/api/trpc/getReceipt", "input=" + quote('{"token": "ZZZZZ9"}'))
    assert status == "404 Not Found"
