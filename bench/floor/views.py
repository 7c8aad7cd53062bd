"""Django's floor: the benchmark's two calls as the least a Django view can do.

The bare reference's work (bench/reference.py: its SQL, and what turns a row into an
answer and a sale into the INSERT's parameters), done by two plain views through
``django.db.connection``, under a project with no middleware (bench/floor/settings.py).
They answer the reference's bytes. What costs more than the reference here is Django's
own: its WSGI handler, request object, URL resolution, cursor wrapper and response.
"""

import orjson
from django.db import IntegrityError, connection
from django.http import HttpResponse

from bench import reference

# The columns of the receipt SELECT that Django's psycopg backend hands over as JSON text.
_JSON_COLUMNS = ("items", "details")
_registrations: dict[int, str | None] = {}


def _answer(body: dict, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type="application/json")


def _one(sql: str, params) -> dict | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
        if row is None:
            return None
        return dict(zip([column.name for column in cursor.description], row, strict=True))


def _registration(merchant_id: int) -> str | None:
    if merchant_id not in _registrations:
        found = _one(reference.REGISTRATION, [merchant_id])
        _registrations[merchant_id] = (found or {}).get("registration_number") or None
    return _registrations[merchant_id]


def get_receipt(request) -> HttpResponse:
    field, value = reference.reference(request.GET.get("input", "{}"))
    row = _one(reference.SELECT[field], [value])
    if row is None:
        return _answer(reference.NOT_FOUND, 404)
    for name in _JSON_COLUMNS:
        if row[name] is not None:
            row[name] = orjson.loads(row[name])
    return _answer(reference.receipt_answer(row, _registration))


def create_receipt(request) -> HttpResponse:
    body = request.body
    sale = orjson.loads(body)
    merchant = _one(reference.MERCHANT, [sale["merchant_string_id"]])
    if merchant is None:
        return _answer(reference.NO_MERCHANT, 404)
    values = reference.sale_values(sale, body, merchant)
    while True:
        try:
            row = _one(reference.INSERT, values)
            break
        except IntegrityError as exc:
            constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None) or ""
            if "short_code" not in constraint:
                return _answer(reference.TOKEN_USED, 409)
            values[reference.SHORT_CODE_AT] = reference.new_short_code()  # a short-code clash: draw another
    return _answer(reference.created_answer(row["id"], values))
