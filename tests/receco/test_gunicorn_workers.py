"""What gunicorn refuses before Django sees it is answered as the API's JSON envelope:
replays the review's HTML 414, 431 and 400 answers, against a real gunicorn."""

import json

import pytest


def _answer(raw: bytes) -> tuple[int, dict, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, json.loads(body)


def _envelope(status, code, message):
    return {"error": {"message": message, "code": -32603, "data": {"code": code, "httpStatus": status}}}


def test_a_request_line_over_the_limit_is_a_json_414(served):
    status, headers, body = _answer(served.raw(b"GET /api/trpc/getReceipt?input=" + b"x" * 9000 + b" HTTP/1.1\r\n\r\n"))
    assert status == 414
    assert headers["Content-Type"] == "application/json"
    assert body == _envelope(
        414,
        "PAYLOAD_TOO_LARGE",
        "The request line is longer than allowed: send large batches with POST (414 URI Too Long)",
    )


def test_a_header_over_the_limit_is_a_json_431(served):
    request = b"GET /api/trpc/getReceipt HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + b"k" * 9000
    status, _, body = _answer(served.raw(request + b"\r\n\r\n"))
    assert status == 431
    assert body["error"]["data"] == {"code": "PAYLOAD_TOO_LARGE", "httpStatus": 431}


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1, 2"])
def test_a_malformed_content_length_is_a_json_400(served, length):
    request = b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + length
    status, _, body = _answer(served.raw(request + b"\r\n\r\n{}"))
    assert status == 400
    assert body == _envelope(
        400,
        "INVALID_INPUT",
        "Malformed request header (check Content-Length and Transfer-Encoding) (400 Bad Request)",
    )


def test_a_malformed_chunk_is_a_400_envelope(served):
    request = (
        b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    )
    raw = served.raw(request)
    assert raw.startswith(b"HTTP/1.1 400 ")
    assert b'"message":"The chunked request body is malformed or incomplete"' in raw
