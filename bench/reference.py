"""The bare reference: the same work as getReceipt and createReceiptFromPOS with no framework.

A plain WSGI function over psycopg, served by the same gunicorn with the same workers
as the project, so the benchmark can say how close the project comes to "just the query
and the JSON". It parses the same input, runs the same SELECT (one row by short code or
token) and the same INSERT (after looking up the merchant by its string id), and answers
the same envelopes; a sale takes the next number of its merchant's series in its INSERT,
as the service's does. It validates nothing beyond what the SQL needs: it is a yardstick,
not a service. BENCH_DATABASE_URL names the database.

The SQL, and what turns a row into an answer and a sale into the INSERT's parameters
(``reference``, ``receipt_answer``, ``sale_values``, ``created_answer``), are shared with
Django's floor (bench/floor: the same work through Django's connection), so that both
answer the same bytes; the functions here do the I/O.
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
SELECT = {
    "short_code": f"SELECT {_COLUMNS} FROM receipts_receipt WHERE short_code = %s",
    "token": f"SELECT {_COLUMNS} FROM receipts_receipt WHERE token = %s",
}
MERCHANT = (
    "SELECT id, string_id, name, logo_url, accent_color, is_test, receipt_prefix, time_zone"
    " FROM merchants_merchant WHERE string_id = %s"
)
INSERT = (
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
REGISTRATION = "SELECT registration_number FROM merchants_merchant WHERE id = %s"
SHORT_CODE_AT = 3  # in the INSERT's parameters, after the series' merchant and name and the token
NOT_FOUND = {"error": {"message": "Receipt not found"}}
NO_MERCHANT = {"error": {"message": "Merchant not found"}}
TOKEN_USED = {"error": {"message": "Token already used"}}
NO_PATH = {"error": {"message": "Not found"}}
_local = threading.local()
_registrations: dict[int, str | None] = {}
_JSON = [("Content-Type", "application/json")]


def reference(raw_input: str) -> tuple[str, str]:
    """The column getReceipt's ``input`` (JSON text) looks in, and the value it looks for."""
    value = orjson.loads(raw_input)
    found = str(value.get("token", "")).strip()
    if len(found) == 6 and _SHORT_CODE.match(found.upper()):
        return "short_code", found.upper()
    return "token", found


def _title(row: dict) -> str:
    if row["status"] == "voided":
        return "Voided"
    if row["receipt_type"] == "refund":
        return "Refund receipt"
    return "VAT receipt" if row["tax_lines"] else "Receipt"


def receipt_answer(row: dict, registration) -> dict:
    """getReceipt's envelope of ``row`` (a dict of SELECT's columns, JSON parsed), changed
    in place; ``registration(merchant_id)`` gives the merchant's registration number."""
    details = row.pop("details") or {}
    row["receipt_type"] = "refund" if row.pop("refund_of_id") else "sale"
    for name in ("subtotal_amount", "discount_amount", "tip_amount", "payment_details", "refund_of"):
        row[name] = details.get(name)
    row["tax_lines"], row["refunds"] = details.get("tax_lines", []), details.get("refunds", [])
    series, number = row.pop("number_series"), row.pop("number")
    row["receipt_number"] = None if number is None else f"{series}-{number:06d}"
    row["title"] = _title(row)
    row["merchant_registration_number"] = registration(row["merchant_id"])
    return {"result": {"data": row}}


def _series(merchant: dict) -> str:
    """The series the merchant's next sale is numbered in: its prefix (or its id's first
    letters) and the year in its time zone, TEST- first for a test merchant."""
    prefix = merchant["receipt_prefix"] or re.sub(r"[^A-Za-z0-9]", "", merchant["string_id"]).upper()[:6] or "R"
    year = datetime.now(UTC).astimezone(zoneinfo.ZoneInfo(merchant["time_zone"])).year
    return f"TEST-{prefix}-{year}" if merchant["is_test"] else f"{prefix}-{year}"


def sale_values(sale: dict, body: bytes, merchant: dict) -> list:
    """The INSERT's parameters for ``sale`` (parsed from ``body``) of ``merchant`` (a dict
    of MERCHANT's columns), its short code the one requested or a fresh one."""
    series = _series(merchant)
    return [
        merchant["id"],
        series,
        sale.get("token") or f"rcpt_{secrets.token_hex(6)}",
        sale.get("short_code") or new_short_code(),
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


def new_short_code() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(6))


def created_answer(receipt_id: int, values: list) -> dict:
    """createReceiptFromPOS's envelope for the receipt ``receipt_id`` stored with ``values``."""
    token = values[2]
    data = {
        "id": receipt_id,
        "token": token,
        "short_code": values[SHORT_CODE_AT],
        "receipt_url": f"{_WEB_URL}/app/receipt/{token}",
    }
    return {"result": {"data": data}}


def _connection() -> psycopg.Connection:
    connection = getattr(_local, "connection", None)
    if connection is None or connection.closed:
        connection = psycopg.connect(_DATABASE_URL, autocommit=True, row_factory=dict_row)
        _local.connection = connection
    return connection


def _answer(start_response, status: str, body) -> list[bytes]:
    start_response(status, _JSON)
    return [orjson.dumps(body)]


def _registration(merchant_id: int) -> str | None:
    if merchant_id not in _registrations:
        found = _connection().execute(REGISTRATION, (merchant_id,)).fetchone()
        _registrations[merchant_id] = (found or {}).get("registration_number") or None
    return _registrations[merchant_id]


def _get_receipt(environ, start_response):
    field, value = reference(dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("input", "{}"))
    row = _connection().execute(SELECT[field], (value,)).fetchone()
    if row is None:
        return _answer(start_response, "404 Not Found", NOT_FOUND)
    return _answer(start_response, "200 OK", receipt_answer(row, _registration))


def _create_receipt(environ, start_response):
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    sale = orjson.loads(body)
    connection = _connection()
    merchant = connection.execute(MERCHANT, (sale["merchant_string_id"],)).fetchone()
    if merchant is None:
        return _answer(start_response, "404 Not Found", NO_MERCHANT)
    values = sale_values(sale, body, merchant)
    while True:
        try:
            row = connection.execute(INSERT, values).fetchone()
            break
        except psycopg.errors.UniqueViolation as exc:
            if "short_code" not in (exc.diag.constraint_name or ""):
                return _answer(start_response, "409 Conflict", TOKEN_USED)
            values[SHORT_CODE_AT] = new_short_code()  # a short-code clash: draw another
    return _answer(start_response, "200 OK", created_answer(row["id"], values))


def application(environ, start_response):
    path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
    if path == "/api/trpc/getReceipt" and method == "GET":
        return _get_receipt(environ, start_response)
    if path == "/api/trpc/createReceiptFromPOS" and method == "POST":
        return _create_receipt(environ, start_response)
    return _answer(start_response, "404 Not Found", NO_PATH)
