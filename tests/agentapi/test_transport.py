"""Bodies and URLs the review found refused without the envelope, replayed against a real
gunicorn: chunked bodies, /api/trpc without its slash, the largest batch over GET."""

import json
import urllib.parse

import pytest

from agentapi.views import MAX_BATCH_CALLS


def _answer(raw: bytes) -> tuple[int, object]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"Transfer-Encoding: chunked" in head:
        body = _dechunk(body)
    return status, json.loads(body)


def _dechunk(body: bytes) -> bytes:
    out = b""
    while True:
        size, _, rest = body.partition(b"\r\n")
        if int(size, 16) == 0:
            return out
        out, body = out + rest[: int(size, 16)], rest[int(size, 16) + 2 :]


def _chunked(path: str, payload: bytes, chunk: int = 1000) -> bytes:
    pieces = b"".join(
        b"%x\r\n%s\r\n" % (len(payload[i : i + chunk]), payload[i : i + chunk]) for i in range(0, len(payload), chunk)
    )
    return (
        (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()
        + pieces
        + b"0\r\n\r\n"
    )


SALE = {
    "merchant_string_id": "test-chunked",
    "total_amount": 2500,
    "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
}


def test_a_chunked_body_is_read(served):
    status, body = _answer(served.raw(_chunked("/api/trpc/createReceiptFromPOS", json.dumps(SALE).encode(), 7)))
    assert status == 200, body
    assert body["result"]["data"]["token"].startswith("rcpt_")


def test_a_chunked_body_over_the_limit_is_413(served):
    status, body = _answer(served.raw(_chunked("/api/trpc/createReceiptFromPOS", b" " * (3 * 1024 * 1024), 65536)))
    assert status == 413
    assert body == {
        "error": {
            "message": "Request body is larger than the limit of 1048576 bytes",
            "code": -32603,
            "data": {"code": "PAYLOAD_TOO_LARGE", "httpStatus": 413, "path": "createReceiptFromPOS"},
        }
    }


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_base_without_its_slash_answers_the_envelope(served, method):
    status, body = _answer(
        served.raw(f"{method} /api/trpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".encode())
    )
    assert status == 404
    assert body["error"]["data"] == {"code": "NOT_FOUND", "httpStatus": 404, "path": ""}


def test_the_largest_batch_works_over_get_with_the_longest_tokens(served):
    inputs = {str(n): {"token": f"{n:02d}" + "x" * 62} for n in range(MAX_BATCH_CALLS)}
    query = "batch=1&input=" + urllib.parse.quote(json.dumps(inputs, separators=(",", ":")), safe="")
    names = ",".join(["getReceipt"] * MAX_BATCH_CALLS)
    status, body = _answer(served.raw(f"GET /api/trpc/{names}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()))
    assert status == 404  # every call answered: none of those receipts exists
    assert len(body) == MAX_BATCH_CALLS
    assert body[0]["error"]["message"] == "Receipt not found"


def test_the_largest_batch_works_over_post(served):
    inputs = {str(n): {**SALE, "token": f"rcpt_batch{n:04d}_aaaaaa"} for n in range(MAX_BATCH_CALLS)}
    names = ",".join(["createReceiptFromPOS"] * MAX_BATCH_CALLS)
    status, body = _answer(served.raw(_chunked(f"/api/trpc/{names}?batch=1", json.dumps(inputs).encode(), 4096)))
    assert status == 200
    assert [call["result"]["data"]["token"] for call in body] == [f"rcpt_batch{n:04d}_aaaaaa" for n in range(50)]


def test_a_batch_over_the_largest_is_refused_whole(api, db):
    names = ",".join(["getReceipt"] * (MAX_BATCH_CALLS + 1))
    response = api.request("GET", f"{names}?batch=1", data={"input": "{}"})
    assert response.status_code == 400
    assert json.loads(response.content) == {
        "error": {
            "message": f"A batch may hold at most {MAX_BATCH_CALLS} calls, not {MAX_BATCH_CALLS + 1}",
            "code": -32603,
            "data": {"code": "INVALID_INPUT", "httpStatus": 400},
        }
    }
