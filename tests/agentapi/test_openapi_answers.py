"""Real answers of each procedure, success and errors, checked against the responses the
OpenAPI document gives for their status: body and required headers."""

import json

import pytest
from django.test import Client
from jsonschema import Draft202012Validator, FormatChecker

from agentapi.openapi.document import document
from merchants.keys import issue_key
from merchants.models import Merchant
from receco.lib.trpc import ProcedureError, failure
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _response_schema(name: str, status: int) -> tuple[dict, dict]:
    """The documented response of procedure ``name`` for ``status``: (response, its JSON schema)."""
    (operation,) = document()["paths"][f"/api/trpc/{name}"].values()
    assert str(status) in operation["responses"], f"{name} does not document {status}"
    response = _resolve(operation["responses"][str(status)])
    return response, response["content"]["application/json"]["schema"]


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        target = document()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def assert_documented(name: str, status: int, body, headers=None) -> None:
    """``body`` (and ``headers``) is what the document says ``name`` answers with ``status``."""
    response, schema = _response_schema(name, status)
    # The schema's references point into the document's components: give it them.
    validator = Draft202012Validator({**schema, "components": document()["components"]}, format_checker=FormatChecker())
    problems = [f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(body)]
    assert problems == [], json.dumps(body)[:2000]
    for header, spec in response.get("headers", {}).items():
        if _resolve(spec).get("required"):
            assert header in (headers or {}), f"{status} without its {header} header"


class Caller:
    """Calls a procedure with the method the document gives it and checks the answer."""

    def __init__(self, client: Client):
        self.client = client

    def __call__(self, name: str, input, key=None, raw: str | None = None, method: str | None = None):
        (documented,) = document()["paths"][f"/api/trpc/{name}"]
        method = method or documented
        headers = bearer(key) if key is not None else {}
        data = raw if raw is not None else json.dumps(input)
        if method == "get":
            response = self.client.get(f"/api/trpc/{name}", {"input": data}, headers=headers)
        else:
            response = self.client.generic(
                method.upper(), f"/api/trpc/{name}", data, content_type="application/json", headers=headers
            )
        body = json.loads(response.content)
        assert_documented(name, response.status_code, body, response.headers)
        return response.status_code, body


@pytest.fixture
def call(client):
    return Caller(client)


@pytest.fixture
def registered(merchant):
    merchant.require_api_key = True
    merchant.save()
    return merchant


@pytest.fixture
def full_sale(sale):
    """A sale with every part: breakdown, tax line, card and a customer to send it to."""
    return {
        **sale,
        "token": "rcpt_openapi_full01",
        "short_code": "FULL01",
        "subtotal_amount": 130000,
        "discount_amount": 10000,
        "tax_lines": [{"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False}],
        "tip_amount": 5000,
        "total_amount": 134000,
        "payment_details": {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        "customer_email": "customer@example.com",
        "customer_phone": "0803 123 4589",
    }


# --- createReceiptFromPOS ---


def test_a_created_receipt_with_deliveries(call, full_sale):
    status, body = call("createReceiptFromPOS", full_sale)
    assert status == 200
    assert [entry["status"] for entry in body["result"]["data"]["deliveries"]] == ["queued", "queued"]


def test_a_sale_for_a_new_test_merchant(call, sale):
    status, body = call("createReceiptFromPOS", {**sale, "merchant_string_id": "test-openapi"})
    assert status == 200
    assert "deliveries" not in body["result"]["data"]


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"total_amount": "12", "items": []}, 400),
        ({"merchant_string_id": "nobody"}, 404),
    ],
)
def test_refused_sales(call, sale, change, status):
    assert call("createReceiptFromPOS", {**sale, **change})[0] == status


def test_a_token_reused_for_another_sale(call, sale, stored):
    status, _ = call("createReceiptFromPOS", {**sale, "token": stored.token, "total_amount": 1})
    assert status == 409


def test_a_key_required_and_missing(call, sale, registered):
    assert call("createReceiptFromPOS", sale)[0] == 401


def test_another_merchants_key(call, sale, other_live_key):
    assert call("createReceiptFromPOS", sale, key=other_live_key)[0] == 403


def test_a_body_over_the_limit(call, sale, settings):
    settings.RECECO_MAX_BODY_BYTES = 1024
    assert call("createReceiptFromPOS", {**sale, "location": "x" * 2000})[0] == 413


def test_unparseable_json(call):
    assert call("createReceiptFromPOS", None, raw="{not json")[0] == 400


def test_the_wrong_method(call, sale):
    assert call("createReceiptFromPOS", sale, method="get")[0] == 405


def test_too_many_new_test_merchants(call, sale, settings):
    settings.RECECO_RATELIMIT_TEST_MERCHANTS = "1/h"
    call("createReceiptFromPOS", {**sale, "merchant_string_id": "test-first"})
    assert call("createReceiptFromPOS", {**sale, "merchant_string_id": "test-second"})[0] == 429


# --- getReceipt ---


def test_a_receipt_with_everything(call, full_sale, live_key):
    call("createReceiptFromPOS", full_sale)
    call("refundReceipt", {"token": "FULL01", "amount": 1000}, key=live_key)
    status, body = call("getReceipt", {"token": "FULL01"}, key=live_key)
    assert status == 200
    data = body["result"]["data"]
    assert (data["status"], len(data["refunds"]), data["customer_email"]) == (
        "partially_refunded",
        1,
        "customer@example.com",
    )


def test_a_masked_plain_receipt(call, stored):
    status, body = call("getReceipt", {"token": "store1"})
    assert status == 200
    assert body["result"]["data"]["payment_details"] is None


def test_a_refund_receipt(call, stored, live_key):
    _, body = call("refundReceipt", {"token": stored.token}, key=live_key)
    status, body = call("getReceipt", {"token": body["result"]["data"]["token"]})
    assert (status, body["result"]["data"]["receipt_type"]) == (200, "refund")


def test_an_open_receipt_format_document(call, stored):
    status, body = call("getReceipt", {"token": stored.token, "format": "orf"})
    assert (status, body["result"]["data"]["receipt"]["receipt_id"]) == (200, stored.token)


@pytest.mark.parametrize(
    ("input", "status"),
    [
        ({"token": "no!"}, 400),
        ({}, 400),
        ({"token": "STORE1", "format": "pdf"}, 400),
        ("a string", 400),
        ({"token": "ZZZZZZ"}, 404),
    ],
)
def test_refused_reads(call, stored, input, status):
    assert call("getReceipt", input)[0] == status


def test_a_malformed_key(call, stored, client):
    response = client.get(
        "/api/trpc/getReceipt", {"input": '{"token": "STORE1"}'}, headers={"Authorization": "Bearer poslive_oops"}
    )
    assert response.status_code == 401
    assert_documented("getReceipt", 401, json.loads(response.content), response.headers)


def test_a_test_key_on_a_live_receipt(call, stored, test_key):
    assert call("getReceipt", {"token": stored.token}, key=test_key)[0] == 403


def test_a_suspended_merchants_key(call, stored, live_key, merchant):
    merchant.set_suspended(True)
    assert call("getReceipt", {"token": stored.token}, key=live_key)[0] == 403


def test_too_many_failed_look_ups(call, settings):
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/m"
    call("getReceipt", {"token": "ZZZZZ1"})
    assert call("getReceipt", {"token": "ZZZZZ2"})[0] == 429


def test_a_live_key_over_its_limit(call, stored, live_key, settings):
    settings.RECECO_RATELIMIT_LIVE_KEY = ["1/m"]
    call("getReceipt", {"token": stored.token}, key=live_key)
    assert call("getReceipt", {"token": stored.token}, key=live_key)[0] == 429


def test_the_database_unavailable_envelope():
    # What the router answers when the database is down (tests/receco/test_database_stall.py
    # stops a real PostgreSQL to see it).
    error = ProcedureError.database_unavailable()
    assert_documented("getReceipt", error.http_status, failure(error, "getReceipt"), {"Retry-After": "5"})


# --- updateReceiptContact ---


def test_a_contact_attached(call, stored):
    status, body = call("updateReceiptContact", {"token": "STORE1", "email": "a@example.com", "phone": ""})
    assert (status, body["result"]["data"]["deliveries"][0]["status"]) == (200, "queued")


def test_a_contact_asked_for_twice(call, stored):
    call("updateReceiptContact", {"token": "STORE1", "email": "a@example.com"})
    status, body = call("updateReceiptContact", {"token": "STORE1", "email": "a@example.com"})
    assert (status, body["result"]["data"]["deliveries"][0]["status"]) == (200, "duplicate")


@pytest.mark.parametrize(
    "input",
    [{"token": "STORE1"}, {"token": "STORE1", "phone": "12"}, {"token": "STORE1", "email": 5}, {"email": "a@b.com"}],
)
def test_refused_contacts(call, stored, input):
    assert call("updateReceiptContact", input)[0] == 400


def test_a_daily_delivery_limit(call, receipt_factory, settings):
    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY = 1
    first = receipt_factory(token="rcpt_limit01_aaaaaa", short_code="LIMIT1")
    second = receipt_factory(token="rcpt_limit02_aaaaaa", short_code="LIMIT2")
    call("updateReceiptContact", {"token": first.token, "phone": "0803 123 4589"})
    assert call("updateReceiptContact", {"token": second.token, "phone": "0803 123 4589"})[0] == 429


# --- refundReceipt and voidReceipt ---


def test_a_refund_by_items(call, stored, live_key):
    status, body = call("refundReceipt", {"token": stored.token, "items": [{"index": 1, "quantity": 1}]}, key=live_key)
    assert (status, body["result"]["data"]["amount"]) == (200, 30000)


def test_a_refund_sent_to_the_sales_customer(call, full_sale, live_key):
    call("createReceiptFromPOS", full_sale)
    status, body = call("refundReceipt", {"token": "FULL01"}, key=live_key)
    assert (status, len(body["result"]["data"]["deliveries"])) == (200, 2)


def test_refused_refunds(call, stored, live_key, registered):
    assert call("refundReceipt", {"token": stored.token, "amount": 10**9}, key=live_key)[0] == 409
    assert call("refundReceipt", {"token": stored.token, "amount": 1, "items": []}, key=live_key)[0] == 400
    assert call("refundReceipt", {"token": stored.token})[0] == 401


def test_a_void_and_its_refusals(call, stored, live_key, receipt_factory):
    status, body = call("voidReceipt", {"token": stored.token, "reason": "Twice"}, key=live_key)
    assert (status, body["result"]["data"]["status"]) == (200, "voided")
    assert call("voidReceipt", {"token": stored.token}, key=live_key)[0] == 200
    assert call("refundReceipt", {"token": stored.token}, key=live_key)[0] == 409
    refunded = receipt_factory(token="rcpt_refunded_aaaaaa", short_code="REFND1")
    call("refundReceipt", {"token": refunded.token, "amount": 1}, key=live_key)
    assert call("voidReceipt", {"token": refunded.token}, key=live_key)[0] == 409


def test_a_test_merchants_sale_voided_without_a_key(call, sale):
    call("createReceiptFromPOS", {**sale, "merchant_string_id": "test-voids"})
    assert Merchant.objects.get(string_id="test-voids").is_test
    assert call("voidReceipt", {"token": sale["token"]})[0] == 200


def test_a_key_of_a_suspended_merchant(call, stored, merchant):
    issued = issue_key(merchant, "live", "Till 2")
    merchant.set_suspended(True)
    assert call("voidReceipt", {"token": stored.token}, key=issued)[0] == 403


# --- the check itself ---


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"result": {"data": {"id": 1, "token": "rcpt_x", "short_code": "K7P2QX"}}}),  # no receipt_url
        (200, {"result": {"data": {"id": 1, "token": "t", "short_code": "K7P2QX", "receipt_url": "u", "extra": 1}}}),
        (
            404,
            {
                "error": {
                    "message": "Receipt not found",
                    "code": -32603,
                    "data": {"code": "CONFLICT", "httpStatus": 404},
                }
            },
        ),
        (404, {"error": {"message": "Receipt not found", "code": 1, "data": {"code": "NOT_FOUND", "httpStatus": 404}}}),
    ],
)
def test_an_answer_unlike_the_document_is_caught(status, body):
    with pytest.raises(AssertionError):
        assert_documented("createReceiptFromPOS", status, body)


def test_a_429_without_retry_after_is_caught():
    error = ProcedureError("TOO_MANY_REQUESTS", "Rate limit exceeded", 30)
    with pytest.raises(AssertionError, match="without its Retry-After header"):
        assert_documented("getReceipt", 429, failure(error, "getReceipt"), {})
