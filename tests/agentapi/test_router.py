"""The transport around the procedures: unknown names, methods, bodies, batches, failures."""

import json
from urllib.parse import parse_qsl

import pytest

from agentapi.views import _query
from receco.lib.trpc import PROCEDURES, Procedure
from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db


def test_an_unknown_procedure_is_not_found(api):
    status, body = api.get("getReceipts", {"token": "K7P2QX"})
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", 'No procedure named "getReceipts"', "getReceipts")


def test_a_nested_path_is_not_found(api):
    status, body = api.post("createReceiptFromPOS/extra", {})
    assert status == 404
    assert body["error"]["data"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "GET"])
def test_other_methods_are_not_supported(api, method):
    """Allow names the procedure's one method: it said GET, POST on every path (issue 32.14,
    schemathesis's allow_header_conformance)."""
    body = {} if method == "GET" else {"data": "{}", "content_type": "application/json"}
    response = api.request(method, "createReceiptFromPOS", **body)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert json.loads(response.content) == error_envelope(
        405,
        "METHOD_NOT_SUPPORTED",
        f"createReceiptFromPOS is a mutation: call it with POST, not {method}",
        "createReceiptFromPOS",
    )


@pytest.mark.parametrize("method", ["POST", "OPTIONS", "PUT"])
def test_a_query_allows_get_alone(api, method):
    response = api.request(method, "getReceipt", data="{}", content_type="application/json")
    assert response.status_code == 405
    assert response["Allow"] == "GET"


def test_a_batch_of_both_kinds_allows_both(api):
    response = api.request("PUT", "getReceipt,voidReceipt?batch=1")
    assert response.status_code == 405
    assert response["Allow"] == "GET, POST"


def test_an_oversized_body_is_refused_before_parsing(api, settings):
    settings.RECECO_MAX_BODY_BYTES = 2048
    status, body = api.post("createReceiptFromPOS", raw_body='{"x": "' + "a" * 4096 + '"}')
    assert status == 413
    assert body == error_envelope(
        413, "PAYLOAD_TOO_LARGE", "Request body is larger than the limit of 2048 bytes", "createReceiptFromPOS"
    )


def test_the_default_body_limit_is_one_mebibyte(api, sale):
    sale["category"] = "a" * (1024 * 1024)
    status, body = api.post("createReceiptFromPOS", sale)
    assert status == 413
    assert body["error"]["message"] == "Request body is larger than the limit of 1048576 bytes"


def test_a_body_that_is_not_utf8_is_refused(api):
    status, body = api.post("createReceiptFromPOS", raw_body=b"\xff\xfe{}")
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "The request body is not UTF-8 text", "createReceiptFromPOS")


def test_unexpected_exceptions_answer_the_envelope_without_details(api, monkeypatch, caplog):
    def explode(call):
        raise RuntimeError("database password is hunter2")

    monkeypatch.setitem(PROCEDURES, "explode", Procedure("query", explode))
    status, body = api.get("explode")
    assert status == 500
    assert body == error_envelope(500, "INTERNAL_SERVER_ERROR", "Internal server error", "explode")
    assert "Unexpected error in procedure explode" in caplog.text


def test_a_bad_host_header_answers_the_envelope(client):
    response = client.get("/api/trpc/getReceipt", headers={"host": "evil.example.com"})
    assert response.status_code == 400
    assert json.loads(response.content) == error_envelope(400, "INVALID_INPUT", "Bad request", "getReceipt")


class TestBatching:
    def test_it_answers_an_array_in_call_order(self, api, receipt):
        inputs = {"0": {"token": receipt.token}, "1": {"token": "k7p2qx"}}
        response = api.client.get("/api/trpc/getReceipt,getReceipt", {"batch": "1", "input": json.dumps(inputs)})
        assert response.status_code == 200
        body = json.loads(response.content)
        assert [entry["result"]["data"]["id"] for entry in body] == [receipt.pk, receipt.pk]

    def test_mixed_statuses_answer_207(self, api, receipt):
        inputs = {"0": {"token": "ZZZZZZ"}, "1": {"token": receipt.token}, "2": {"token": "!"}}
        response = api.client.get(
            "/api/trpc/getReceipt,getReceipt,getReceipt", {"batch": "1", "input": json.dumps(inputs)}
        )
        assert response.status_code == 207
        body = json.loads(response.content)
        assert body[0] == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")
        assert body[1]["result"]["data"]["token"] == receipt.token
        assert body[2] == error_envelope(400, "INVALID_INPUT", "Invalid token format", "getReceipt")

    def test_equal_error_statuses_keep_that_status(self, api):
        inputs = {"0": {"token": "ZZZZZZ"}, "1": {"token": "YYYYYY"}}
        response = api.client.get("/api/trpc/getReceipt,getReceipt", {"batch": "1", "input": json.dumps(inputs)})
        assert response.status_code == 404
        assert len(json.loads(response.content)) == 2

    def test_post_batches_use_the_same_keyed_shape(self, api, sale, receipt_factory):
        receipt = receipt_factory()
        second = {**sale, "token": "rcpt_second_bbbbbb", "short_code": "B2B2B2"}
        body = {"0": {"token": receipt.token, "email": "a@example.com"}, "1": second}
        response = api.client.post(
            "/api/trpc/updateReceiptContact,createReceiptFromPOS?batch=1",
            json.dumps(body),
            content_type="application/json",
        )
        assert response.status_code == 200
        results = json.loads(response.content)
        assert results[0]["result"]["data"]["success"] is True
        assert results[1]["result"]["data"]["token"] == "rcpt_second_bbbbbb"

    def test_a_missing_input_fails_only_its_call(self, api, receipt):
        response = api.client.get(
            "/api/trpc/getReceipt,getReceipt", {"batch": "1", "input": json.dumps({"0": {"token": receipt.token}})}
        )
        assert response.status_code == 207
        body = json.loads(response.content)
        assert body[1] == error_envelope(400, "INVALID_INPUT", "Input must be a JSON object", "getReceipt")

    def test_unparseable_batch_input_fails_every_call(self, api):
        response = api.client.get("/api/trpc/getReceipt,getReceipt", {"batch": "1", "input": "{"})
        assert response.status_code == 400
        body = json.loads(response.content)
        assert [entry["error"]["data"]["path"] for entry in body] == ["getReceipt", "getReceipt"]
        assert body[0]["error"]["message"].startswith("The input parameter is not valid JSON: ")

    def test_a_batch_input_must_be_keyed(self, api):
        response = api.client.get("/api/trpc/getReceipt", {"batch": "1", "input": "[1]"})
        assert response.status_code == 400
        assert json.loads(response.content) == [
            error_envelope(
                400, "INVALID_INPUT", 'A batch input parameter must be a JSON object keyed "0", "1", ...', "getReceipt"
            )
        ]

    def test_a_wrong_method_in_a_batch_fails_that_call(self, api, receipt):
        response = api.client.get(
            "/api/trpc/getReceipt,createReceiptFromPOS",
            {"batch": "1", "input": json.dumps({"0": {"token": receipt.token}, "1": {}})},
        )
        assert response.status_code == 207
        assert json.loads(response.content)[1]["error"]["data"]["code"] == "METHOD_NOT_SUPPORTED"


def test_several_names_without_batch_are_one_unknown_procedure(api):
    status, body = api.get("getReceipt,getReceipt", {"token": "K7P2QX"})
    assert status == 404
    assert body["error"]["data"]["path"] == "getReceipt,getReceipt"


class TestTheQueryString:
    def test_unencoded_utf8_is_read_as_django_would(self, api, receipt_factory):
        # A client that does not percent-encode: the server hands the bytes on as latin-1.
        receipt = receipt_factory()
        response = api.client.get(
            "/api/trpc/getReceipt",
            QUERY_STRING='input={"token":"' + receipt.token + '","x":"é"}'.encode().decode("latin-1"),
        )
        assert response.status_code == 200

    def test_the_last_of_a_repeated_parameter_counts(self, api, receipt_factory):
        receipt = receipt_factory()
        response = api.client.get(f'/api/trpc/getReceipt?input=%7B%7D&input={{"token":"{receipt.token}"}}')
        assert response.status_code == 200


def test_api_answers_carry_the_headers_of_the_skipped_middleware(api, receipt):
    response = api.request("GET", "getReceipt", data={"input": json.dumps({"token": receipt.token})})
    assert response["Content-Type"] == "application/json"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Length"] == str(len(response.content))


@pytest.mark.parametrize(
    "query",
    [
        "input=%7B%22token%22%3A%20%22STORE1%22%7D",
        "input=",
        "input",
        "input=a=b%3D",
        "input=%ZZ%7",
        "input=%E2%82%AC%FF",
        "input=a+b%2B",
        "input=a&input=b",
        "batch=1&input=%7B%7D",
        "input=x;y",
        "inputs=x",
        "",
    ],
)
def test_the_query_string_is_read_as_parse_qsl_reads_it(rf, query):
    assert _query(rf.get("/api/trpc/getReceipt?" + query)) == dict(parse_qsl(query, keep_blank_values=True))
