import base64
import json
import socket
import threading

import pytest
from receco_agent import client

from tests.agent.support import ForwardProxy, Reply, error_envelope

TOKEN = "rcpt_mwrjo7uj_lc6zxw"
CREATE = "createReceiptFromPOS"
BODY = json.dumps({"token": TOKEN, "short_code": "ABCDEF", "merchant_string_id": "test-shop"})


def create(service, api_key=None, timeout=5.0):
    return client.create_receipt(service.api_url, api_key, TOKEN, BODY, timeout)


def test_a_200_with_the_receipt_confirms(fake_service):
    answer = create(fake_service, api_key="postest_abc")
    assert answer.kind == client.CONFIRMED
    assert answer.status == 200
    assert answer.data["token"] == TOKEN
    request = fake_service.requests[0]
    assert request["method"] == "POST"
    assert request["path"] == "/api/trpc/createReceiptFromPOS"
    assert request["headers"]["Authorization"] == "Bearer postest_abc"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["raw"] == BODY.encode()


def test_no_authorization_header_without_a_key(fake_service):
    create(fake_service)
    assert "Authorization" not in fake_service.requests[0]["headers"]


def test_a_4xx_envelope_is_a_refusal(fake_service):
    fake_service.script.append(Reply(404, error_envelope(404, "NOT_FOUND", "Merchant not found")))
    answer = create(fake_service)
    assert (answer.kind, answer.status, answer.code, answer.message) == (
        client.REFUSED,
        404,
        "NOT_FOUND",
        "Merchant not found",
    )


def test_429_is_transient_with_retry_after(fake_service):
    fake_service.script.append(
        Reply(
            429,
            error_envelope(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
            {"Retry-After": "12"},
        )
    )
    answer = create(fake_service)
    assert (answer.kind, answer.status, answer.message, answer.retry_after) == (
        client.TRANSIENT,
        429,
        "Rate limit exceeded",
        12.0,
    )


def test_5xx_is_transient(fake_service):
    fake_service.script.append(Reply(503, b"<html>down</html>", {"Content-Type": "text/html"}))
    answer = create(fake_service)
    assert answer.kind == client.TRANSIENT
    assert answer.status == 503
    assert answer.message == (
        f"{fake_service.api_url}/trpc/createReceiptFromPOS answered HTTP 503 without a Receco error body; "
        "check rececoApiUrl"
    )


def test_a_404_that_is_not_the_service_is_transient(fake_service):
    fake_service.script.append(Reply(404, b"Not Found", {"Content-Type": "text/plain"}))
    answer = create(fake_service)
    assert (answer.kind, answer.status) == (client.TRANSIENT, 404)


def test_a_200_without_the_receipt_is_not_a_confirmation(fake_service):
    fake_service.script.append(Reply(200, b"<html>captive portal</html>", {"Content-Type": "text/html"}))
    answer = create(fake_service)
    assert answer.kind == client.TRANSIENT
    assert (
        answer.message
        == f"{fake_service.api_url}/trpc/createReceiptFromPOS answered 200 without the receipt; check rececoApiUrl"
    )


def test_a_redirect_is_not_followed(fake_service):
    fake_service.script.append(Reply(301, b"", {"Location": "https://elsewhere.example/api/trpc/x"}))
    answer = create(fake_service)
    assert answer.kind == client.TRANSIENT
    assert answer.status == 301
    assert answer.message.endswith(
        "redirects to https://elsewhere.example/api/trpc/x; set rececoApiUrl to the final address"
    )
    assert len(fake_service.requests) == 1


def test_connection_refused_is_transient(closed_url):
    answer = client.create_receipt(closed_url, None, TOKEN, BODY, 5.0)
    assert answer.kind == client.TRANSIENT
    assert answer.status is None
    assert answer.message == f"cannot reach {closed_url}/trpc/createReceiptFromPOS: Connection refused"


def test_a_slow_service_times_out(fake_service):
    fake_service.script.append(Reply(200, {"result": {"data": {"token": TOKEN}}}, delay=2.0))
    answer = create(fake_service, timeout=0.3)
    assert answer.kind == client.TRANSIENT
    assert answer.status is None
    assert answer.message == f"no answer from {fake_service.api_url}/trpc/createReceiptFromPOS within 0.3 s"


def test_probe(fake_service, closed_url):
    assert client.probe(fake_service.api_url, None, 5.0) == (True, "the service answers (no API key configured)")
    assert fake_service.requests[0]["method"] == "GET"
    assert fake_service.requests[0]["path"] == "/api/trpc/getReceipt?input=%7B%22token%22%3A%22rcpt_0_keycheck%22%7D"
    reachable, detail = client.probe(closed_url, None, 5.0)
    assert reachable is False
    assert detail.endswith("Connection refused")


def _answer_once(raw: bytes) -> client.Answer:
    """Call a server that reads the request, writes ``raw`` and hangs up."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        conn, _ = listener.accept()
        # Read the whole request: closing with unread bytes would reset the connection.
        received = b""
        while not received.endswith(BODY.encode()):
            received += conn.recv(65536)
        conn.sendall(raw)
        conn.close()

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        return client.create_receipt(f"http://127.0.0.1:{listener.getsockname()[1]}/api", None, TOKEN, BODY, 5.0)
    finally:
        thread.join(10)
        listener.close()


def test_an_answer_cut_short_is_transient():
    answer = _answer_once(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"res')
    assert (answer.kind, answer.status) == (client.TRANSIENT, 200)
    assert answer.message.endswith("answered 200 without the receipt; check rececoApiUrl")


def test_a_garbled_answer_is_transient():
    answer = _answer_once(b"garbage\r\n\r\n")
    assert (answer.kind, answer.status) == (client.TRANSIENT, None)
    assert "/trpc/createReceiptFromPOS failed: BadStatusLine(" in answer.message


def test_a_hang_up_without_answer_is_transient():
    answer = _answer_once(b"")
    assert (answer.kind, answer.status) == (client.TRANSIENT, None)
    assert answer.message.endswith(
        "/trpc/createReceiptFromPOS failed: RemoteDisconnected('Remote end closed connection without response')"
    )


def test_probe_tells_whether_the_key_is_accepted(fake_service):
    fake_service.script.append(Reply(404, error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")))
    assert client.probe(fake_service.api_url, "postest_k", 5.0) == (True, "the service answers and accepts the API key")
    fake_service.script.append(Reply(401, error_envelope(401, "UNAUTHORIZED", "Invalid API key", "getReceipt")))
    assert client.probe(fake_service.api_url, "postest_k", 5.0) == (
        True,
        "API key refused by the service: Invalid API key",
    )


@pytest.fixture
def forward_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    proxy = ForwardProxy()
    yield proxy
    proxy.close()


def _batch(api_url: str) -> list[client.Answer] | client.Answer:
    return client.call_batch(client.Connection(api_url, 5.0), "postest_abc", [client.Call(CREATE, TOKEN, BODY)])


def test_a_batch_goes_through_the_proxy_the_single_uploads_use(fake_service, forward_proxy, monkeypatch):
    # A shop whose network allows the service only through its proxy: the backlog drains too.
    monkeypatch.setenv("http_proxy", f"http://till:s3cret@127.0.0.1:{forward_proxy.port}")
    answers = _batch(fake_service.api_url)
    assert [(a.kind, a.data["token"]) for a in answers] == [(client.CONFIRMED, TOKEN)]
    line, authorization = forward_proxy.seen[0]
    assert line == f"POST {fake_service.api_url}/trpc/{CREATE}?batch=1 HTTP/1.1"
    assert authorization == "Basic " + base64.b64encode(b"till:s3cret").decode()
    assert fake_service.requests[0]["headers"]["Authorization"] == "Bearer postest_abc"
    assert create(fake_service).kind == client.CONFIRMED  # the single upload, through it as well
    assert len(forward_proxy.seen) == 2


def test_an_https_batch_asks_the_proxy_for_a_tunnel(forward_proxy, monkeypatch):
    monkeypatch.setenv("https_proxy", f"http://till:s3cret@127.0.0.1:{forward_proxy.port}")
    answer = _batch("https://receco.example/api")
    assert forward_proxy.seen == [
        ("CONNECT receco.example:443 HTTP/1.0", "Basic " + base64.b64encode(b"till:s3cret").decode())
    ]
    assert answer.kind == client.TRANSIENT
    assert answer.message == (
        f"cannot reach https://receco.example/api/trpc/{CREATE}?batch=1: Tunnel connection failed: 403 Forbidden"
    )


def test_no_proxy_sends_a_batch_straight_to_the_service(fake_service, forward_proxy, monkeypatch):
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{forward_proxy.port}")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    answers = _batch(fake_service.api_url)
    assert [a.kind for a in answers] == [client.CONFIRMED]
    assert forward_proxy.seen == []
