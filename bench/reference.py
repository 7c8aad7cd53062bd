"""The bare reference: the same work as getReceipt and createReceiptFromPOS with no framework.

A plain WSGI function over psycopg, served by the same gunicorn with the same workers
as the project, so the benchmark can say how close the project comes to "just the query
and the JSON". It parses the same input, runs the same SELECT (one row by short code or
token) and the same INSERT (after looking up the merchant by its string id), and answers
the same envelopes; a sale takes the next number of its merchant's series in its INSERT,
as the service's does. It validates nothing beyond what the SQL needs: it is a yardstick,
not a service. BENCH_DATABASE_URL names the database.
"""

import hashlib
import os
import re
import secrets
import threading
import zoneinfo
from datetime import UTC, datetime
from urllib.parse import parse_qsl

import orjson
import psycopg
from psycopg.rows import dict_row

_DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/receco_bench_10k")
_WEB_URL = os.environ.get("RECECO_WEB_URL", "http://127.0.0.1:8000")
_SHORT_CODE = re.compile(r"^[A-Z0-9]{6}$")
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_COLUMNS = (
    "id, token, short_code, merchant_id, merchant_name, merchant_logo, accent_color, total_amount, currency,"
    " transaction_date, items, category, payment_method, location, status, customer_email, customer_phone,"
    " created_at, updated_at, details, refund_of_id, number_series, number"
)
_SELECT = {
    "short_code": f"SELECT {_COLUMNS} FROM receipts_receipt WHERE short_code = %s",
    "token": f"SELECT {_COLUMNS} FROM receipts_receipt WHERE token = %s",
}
_MERCHANT = (
    "SELECT id, string_id, name, logo_url, accent_color, is_test, receipt_prefix, time_zone"
    " FROM merchants_merchant WHERE string_id = %s"
)
_INSERT = (
    "WITH receipt_number AS (INSERT INTO receipts_receiptseries (merchant_id, name, last) VALUES (%s, %s, 1)"
    " ON CONFLICT (merchant_id, name) DO UPDATE SET last = receipts_receiptseries.last + 1 RETURNING last)"
    " INSERT INTO receipts_receipt (token, short_code, merchant_id, merchant_name, merchant_logo, accent_color,"
    " total_amount, currency, transaction_date, items, category, payment_method, location, status, livemode,"
    " customer_email, customer_phone, fingerprint, number_series, number, created_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, COALESCE(%s::timestamptz, now()), %s, %s, %s, %s, %s, %s, %s, %s, %s,"
    " %s, (SELECT last FROM receipt_number), now(), now()) RETURNING id"
)
# The merchant's registration number, which getReceipt states as the record has it: the
# service remembers merchants between requests, and so does this (without ever forgetting).
_REGISTRATION = "SELECT registration_number FROM merchants_merchant WHERE id = %s"
_registrations: dict[int, str | None] = {}
_local = threading.local()
_JSON = [("Content-Type", "application/json")]


def _connection() -> psycopg.Connection:
    connection = getattr(_local, "connection", None)
    if connection is None or connection.closed:
        connection = psycopg.connect(_DATABASE_URL, autocommit=True, row_factory=dict_row)
        _local.connection = connection
    return connection


def _answer(start_response, status: str, body) -> list[bytes]:
    start_response(status, _JSON)
    return [orjson.dumps(body)]


def _title(row: dict) -> str:
    if row["status"] == "voided":
        return "Voided"
    if row["receipt_type"] == "refund":
        return "Refund receipt"
    return "VAT receipt" if row["tax_lines"] else "Receipt"


def _get_receipt(environ, start_response):
    value = orjson.loads(dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("input", "{}"))
    reference = str(value.get("token", "")).strip()
    field = "short_code" if len(reference) == 6 and _SHORT_CODE.match(reference.upper()) else "token"
    if field == "short_code":
        reference = reference.upper()
    row = _connection().execute(_SELECT[field], (reference,)).fetchone()
    if row is None:
        return _answer(start_response, "404 Not Found", {"error": {"message": "Receipt not found"}})
    details = row.pop("details") or {}
    row["receipt_type"] = "refund" if row.pop("refund_of_id") else "sale"
    for name in ("subtotal_amount", "discount_amount", "tip_amount", "payment_details", "refund_of"):
        row[name] = details.get(name)
    row["tax_lines"], row["refunds"] = details.get("tax_lines", []), details.get("refunds", [])
    series, number = row.pop("number_series"), row.pop("number")
    row["receipt_number"] = None if number is None else f"{series}-{number:06d}"
    row["title"] = _title(row)
    merchant_id = row["merchant_id"]
    if merchant_id not in _registrations:
        found = _connection().execute(_REGISTRATION, (merchant_id,)).fetchone()
        _registrations[merchant_id] = (found or {}).get("registration_number") or None
    row["merchant_registration_number"] = _registrations[merchant_id]
    return _answer(start_response, "200 OK", {"result": {"data": row}})


_SHORT_CODE_AT = 3  # in the INSERT's parameters, after the series' merchant and name and the token


def _series(merchant: dict) -> str:
    """The series the merchant's next sale is numbered in: its prefix (or its id's first
    letters) and the year in its time zone, TEST- first for a test merchant."""
    prefix = merchant["receipt_prefix"] or re.sub(r"[^A-Za-z0-9]", "", merchant["string_id"]).upper()[:6] or "R"
    year = datetime.now(UTC).astimezone(zoneinfo.ZoneInfo(merchant["time_zone"])).year
    return f"TEST-{prefix}-{year}" if merchant["is_test"] else f"{prefix}-{year}"


def _create_receipt(environ, start_response):
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    sale = orjson.loads(body)
    connection = _connection()
    merchant = connection.execute(_MERCHANT, (sale["merchant_string_id"],)).fetchone()
    if merchant is None:
        return _answer(start_response, "404 Not Found", {"error": {"message": "Merchant not found"}})
    token = sale.get("token") or f"rcpt_{secrets.token_hex(6)}"
    series = _series(merchant)
    values = [
        merchant["id"],
        series,
        token,
        None,  # the short code, drawn below
        merchant["id"],
        sale.get("merchant_name") or merchant["name"],
        sale.get("merchant_logo") or merchant["logo_url"] or None,
        sale.get("accent_color") or merchant["accent_color"],
        sale["total_amount"],
        sale.get("currency") or "NGN",
        sale.get("transaction_date"),
        orjson.dumps(sale["items"]).decode(),
        sale.get("category"),
        sale.get("payment_method"),
        sale.get("location"),
        sale.get("status") or "completed",
        not merchant["is_test"],
        sale.get("customer_email"),
        sale.get("customer_phone"),
        hashlib.sha256(body).hexdigest(),
        series,
    ]
    while True:
        values[_SHORT_CODE_AT] = sale.get("short_code") or "".join(secrets.choice(_ALPHABET) for _ in range(6))
        try:
            row = connection.execute(_INSERT, values).fetchone()
            break
        except psycopg.errors.UniqueViolation as exc:
            if "short_code" not in (exc.diag.constraint_name or ""):
                return _answer(start_response, "409 Conflict", {"error": {"message": "Token already used"}})
            sale["short_code"] = None  # a short-code clash: draw another
    data = {
        "id": row["id"],
        "token": token,
        "short_code": values[_SHORT_CODE_AT],
        "receipt_url": f"{_WEB_URL}/app/receipt/{token}",
    }
    return _answer(start_response, "200 OK", {"result": {"data": data}})


def application(environ, start_response):
    path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
    if path == "/api/trpc/getReceipt" and method == "GET":
        return _get_receipt(environ, start_response)
    if path == "/api/trpc/createReceiptFromPOS" and method == "POST":
        return _create_receipt(environ, start_response)
    return _answer(start_response, "404 Not Found", {"error": {"message": "Not found"}})
