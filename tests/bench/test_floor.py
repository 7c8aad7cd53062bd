"""Django's floor (bench/floor) does the bare reference's work through Django's connection
and answers the reference's bytes, under a project with no middleware."""

import json
from urllib.parse import quote

import orjson
import pytest
from django.db import connection
from django.test import RequestFactory

from bench import reference
from bench.floor import settings as floor_settings
from bench.floor import urls, views
from tests.bench.conftest import call

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def bare(reference_app, monkeypatch):
    """The bare reference's WSGI function, on the test database, both registration caches fresh."""
    monkeypatch.setattr(reference, "_registrations", {})
    monkeypatch.setattr(views, "_registrations", {})
    return reference_app


def _get(reference_text: str) -> str:
    return "input=" + quote(json.dumps({"token": reference_text}))


def test_the_floor_has_no_middleware_and_two_views():
    assert floor_settings.MIDDLEWARE == []
    assert floor_settings.INSTALLED_APPS == []
    assert [(str(route.pattern), route.callback) for route in urls.urlpatterns] == [
        ("api/trpc/getReceipt", views.get_receipt),
        ("api/trpc/createReceiptFromPOS", views.create_receipt),
    ]


@pytest.mark.parametrize("by", ["token", "short_code"])
def test_getreceipt_answers_the_references_bytes(bare, receipt_factory, by):
    tax = {"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}
    receipt = receipt_factory(tax_lines=[tax])
    query = _get(getattr(receipt, by).lower() if by == "short_code" else receipt.token)
    status, expected = call(bare, "GET", "/api/trpc/getReceipt", query)
    response = views.get_receipt(RequestFactory().get(f"/api/trpc/getReceipt?{query}"))
    assert status == "200 OK"
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == expected
    assert orjson.loads(response.content)["result"]["data"]["title"] == "VAT receipt"


def test_an_unknown_receipt_is_the_references_404(bare):
    query = _get("ZZZZZ9")
    status, expected = call(bare, "GET", "/api/trpc/getReceipt", query)
    response = views.get_receipt(RequestFactory().get(f"/api/trpc/getReceipt?{query}"))
    assert (status, response.status_code) == ("404 Not Found", 404)
    assert response.content == expected == b'{"error":{"message":"Receipt not found"}}'


def _stored(token: str) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM receipts_receipt WHERE token = %s", [token])
        return dict(zip([column.name for column in cursor.description], cursor.fetchone(), strict=True))


def test_a_sale_is_stored_and_answered_as_the_reference_does(bare, sale):
    """The same row but for what is the sale's own (its id, token, short code, number and
    the fingerprint of its body), and the same answer's bytes."""
    first = {**sale, "token": "rcpt_bare0001_aaaaaa", "short_code": None}
    status, bare_answer = call(bare, "POST", "/api/trpc/createReceiptFromPOS", body=json.dumps(first).encode())
    second = {**sale, "token": "rcpt_floor001_bbbbbb", "short_code": None}
    request = RequestFactory().post(
        "/api/trpc/createReceiptFromPOS", json.dumps(second).encode(), content_type="application/json"
    )
    response = views.create_receipt(request)
    assert (status, response.status_code) == ("200 OK", 200)
    by_bare, by_floor = _stored(first["token"]), _stored(second["token"])
    own = {"id", "token", "short_code", "number", "fingerprint", "created_at", "updated_at"}
    assert {k: v for k, v in by_floor.items() if k not in own} == {k: v for k, v in by_bare.items() if k not in own}
    assert by_floor["number"] == by_bare["number"] + 1  # the next of the same series
    bare_link = orjson.loads(bare_answer)["result"]["data"]["receipt_url"]
    assert bare_link.endswith(f"/app/receipt/{first['token']}")
    data = {
        "id": by_floor["id"],
        "token": second["token"],
        "short_code": by_floor["short_code"],
        "receipt_url": bare_link.replace(first["token"], second["token"]),  # under the same web address
    }
    assert response.content == orjson.dumps({"result": {"data": data}})
    assert set(orjson.loads(bare_answer)["result"]["data"]) == set(data)


def test_a_used_token_is_the_references_409(bare, sale):
    body = json.dumps({**sale, "short_code": None}).encode()
    call(bare, "POST", "/api/trpc/createReceiptFromPOS", body=body)
    response = views.create_receipt(
        RequestFactory().post("/api/trpc/createReceiptFromPOS", body, content_type="application/json")
    )
    assert response.status_code == 409
    assert response.content == b'{"error":{"message":"Token already used"}}'


def test_a_taken_short_code_is_drawn_again(bare, sale):
    call(bare, "POST", "/api/trpc/createReceiptFromPOS", body=json.dumps(sale).encode())
    again = {**sale, "token": "rcpt_floor002_cccccc"}  # the same requested short code
    response = views.create_receipt(
        RequestFactory().post("/api/trpc/createReceiptFromPOS", json.dumps(again), content_type="application/json")
    )
    assert response.status_code == 200
    code = orjson.loads(response.content)["result"]["data"]["short_code"]
    assert code != sale["short_code"]
    assert _stored(again["token"])["short_code"] == code
