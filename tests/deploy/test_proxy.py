"""The shipped reverse proxy (deploy/nginx) with the real nginx in front of a real gunicorn
(gunicorn.conf.py) on a migrated database, replaying issue 32.6: one client filling every
connection slot with half-sent requests, slowloris, and what can be refused at once.

nginx runs deploy/nginx/nginx.conf as it is and receco.conf.template rendered with
compose.yaml's limits (deploy/proxy.py), listening on a free port of 127.0.0.1. Clients
come from addresses of their own on the loopback network (127.0.0.2, ...), so that the
attacker's per-address limits are not the other client's.
"""

import http.client
import json
import re
import select
import selectors
import socket
import threading
import time
from pathlib import Path

import pytest

from agentapi.openapi.document import document
from deploy import proxy as shipped
from tests import databases
from tests.servers import closed_port, forget_cache_prefix, free_port, start_gunicorn

pytestmark = pytest.mark.skipif(shipped.nginx_binary() is None, reason="needs nginx (apt-get install nginx)")

ATTACKER, CLIENT = "127.0.0.1", "127.0.0.2"
COMPOSE = shipped.compose_environment()
CONNECTIONS = int(COMPOSE["RECECO_PROXY_CONNECTIONS"])
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
HALF_SENT = (
    b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n" + b'{"token": "rcpt_'
)
METRICS_CLIENT = "127.0.0.5"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """gunicorn (two workers) behind the shipped nginx, which the tests reach."""
    folder = tmp_path_factory.mktemp("proxy")
    database = databases.fresh(folder)
    web = start_gunicorn(
        database, folder / "gunicorn.log", workers=2, access_log=True,
        RECECO_TRUSTED_PROXY_COUNT="1", RECECO_METRICS="1", RECECO_METRICS_ALLOWED_IPS=METRICS_CLIENT,
        PROMETHEUS_MULTIPROC_DIR=str(folder / "metrics"),
    )  # fmt: skip
    front = shipped.start(folder / "nginx", free_port(), f"127.0.0.1:{web.port}")
    _until_served(front)
    yield front, web
    front.stop()
    web.stop()
    forget_cache_prefix()


def _until_served(front) -> None:
    """Wait until gunicorn's workers, booted, answer through the proxy."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if _ask(front, "127.0.0.9", HEALTHZ, timeout=5)[0] == "HTTP/1.1 200 OK":
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "gunicorn did not answer through the proxy"


def _connect(front, source: str, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", front.port), timeout=timeout, source_address=(source, 0))


def _answer(sock: socket.socket) -> tuple[str, dict, bytes]:
    """The answer: status line, headers, body; read to its Content-Length, or else until
    the server closes. (After refusing a request whose body is still to come, nginx
    lingers up to 5 s for it before it closes.) ``""`` when it closed without one."""
    data = b""
    while True:
        head, blank, body = data.partition(b"\r\n\r\n")
        if blank:
            status, *lines = head.decode("latin-1").split("\r\n")
            headers = dict(line.split(": ", 1) for line in lines)
            if "Content-Length" in headers and len(body) >= int(headers["Content-Length"]):
                return status, headers, body
        chunk = sock.recv(65536)
        if not chunk:
            return (status, headers, body) if blank else ("", {}, b"")
        data += chunk


def _ask(front, source: str, request: bytes, timeout: float = 10) -> tuple[str, dict, bytes]:
    with _connect(front, source, timeout) as sock:
        sock.sendall(request)
        return _answer(sock)


def _healthy(front, source: str = CLIENT) -> str:
    """The status line /healthz answers through the proxy; a timeout fails the test."""
    return _ask(front, source, HEALTHZ, timeout=5)[0]


def _envelope(status: int, code: str, message: str) -> dict:
    return {"error": {"message": message, "code": -32603, "data": {"code": code, "httpStatus": status}}}


# -- one client filling every connection slot ----------------------------------------------


def test_2200_half_sent_requests_from_one_address_leave_healthz_answering_another(site):
    """Issue 32.6: 2,200 half-sent requests from one address (each reopened after its
    refusal) made /healthz answer 503 after 9 s, or time out. Behind the proxy the
    attacker holds at most RECECO_PROXY_CONNECTIONS requests in progress, each an nginx
    connection, never a gunicorn worker; its others are refused at once (429), and
    another client's /healthz is answered 200 all along."""
    front, web = site
    poller = selectors.DefaultSelector()
    sent, refused, statuses, health = 0, 0, {}, []
    try:
        while sent < 2200 or refused < sent - CONNECTIONS:
            if sent < 2200 and len(poller.get_map()) < 4 * CONNECTIONS:
                sock = _connect(front, ATTACKER)
                sock.sendall(HALF_SENT)
                poller.register(sock, selectors.EVENT_READ)
                sent += 1
                if sent % 200 == 0:
                    health.append(_healthy(front))
                continue
            ready = poller.select(timeout=30)
            assert ready, f"no answer within 30 s: {sent} sent, {refused} answered"
            for key, _ in ready:
                poller.unregister(key.fileobj)
                with key.fileobj as sock:
                    status = _answer(sock)[0]
                statuses[status] = statuses.get(status, 0) + 1
                refused += 1
    finally:
        for key in list(poller.get_map().values()):
            key.fileobj.close()
        poller.close()
    assert health == ["HTTP/1.1 200 OK"] * 11
    assert _healthy(front) == "HTTP/1.1 200 OK"
    # Every answer the attacker had was a refusal of the proxy's: over the limit at once
    # (429), or, for those it held, the connection closed at client_body_timeout (10 s;
    # nginx closes silently), after which the attacker opened the next.
    assert set(statuses) - {""} == {"HTTP/1.1 429 Too Many Requests"}, statuses
    # The loop ended with all but RECECO_PROXY_CONNECTIONS of them answered.
    assert sent - refused <= CONNECTIONS
    # gunicorn saw none of them: nginx waits for a whole body before passing a request on.
    assert "createReceiptFromPOS" not in web.log.read_text()


def test_a_refusal_of_the_per_address_limits_is_the_apis_envelope_with_retry_after(site):
    """RECECO_PROXY_CONNECTIONS + 8 half-sent requests from one address: 8 are refused at
    once (the heads reach nginx's two processes in any order, so not always the last 8);
    the others are held until client_body_timeout."""
    front, _ = site
    poller = selectors.DefaultSelector()
    held = [_connect(front, "127.0.0.3") for _ in range(CONNECTIONS + 8)]
    answers = []
    try:
        for sock in held:
            sock.sendall(HALF_SENT)
            poller.register(sock, selectors.EVENT_READ)
        while len(answers) < 8:
            ready = poller.select(timeout=30)
            assert ready, "fewer than 8 refused"
            for key, _ in ready:
                poller.unregister(key.fileobj)
                answers.append(_answer(key.fileobj))
    finally:
        poller.close()
        for sock in held:
            sock.close()
    for status, headers, body in answers:
        assert status == "HTTP/1.1 429 Too Many Requests"
        assert headers["Retry-After"] == "1"
        assert headers["Content-Type"] == "application/json"
        assert json.loads(body) == _envelope(
            429, "TOO_MANY_REQUESTS", "Too many requests from one address at once; try again in a second"
        )


def test_one_address_sending_faster_than_its_rate_is_refused_while_another_is_served(site):
    front, _ = site
    burst = int(COMPOSE["RECECO_PROXY_BURST"])
    found: dict[str, int] = {}

    def send(count: int) -> None:
        for _ in range(count):
            status = _ask(front, "127.0.0.4", HEALTHZ)[0]
            found[status] = found.get(status, 0) + 1

    threads = [threading.Thread(target=send, args=(burst // 4,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Twice the burst within far less time than the rate refills it: some refused.
    assert found.get("HTTP/1.1 429 Too Many Requests", 0) > 0, found
    assert set(found) == {"HTTP/1.1 200 OK", "HTTP/1.1 429 Too Many Requests"}
    assert _healthy(front) == "HTTP/1.1 200 OK"


# -- slowloris -----------------------------------------------------------------------------


class Trickler(threading.Thread):
    """A client that sends a request's head one byte at a time, every ``every`` seconds,
    until the server closes the connection; ``cut`` when it did before the head was whole."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: " + b"s" * 200 + b"\r\n\r\n"

    def __init__(self, front, every: float):
        super().__init__(daemon=True)
        self.sock = _connect(front, ATTACKER, timeout=60)
        self.every = every
        self.cut = False
        self.answer = b""

    def run(self):
        with self.sock:
            for index in range(len(self.HEAD)):
                try:
                    self.sock.sendall(self.HEAD[index : index + 1])
                    readable, _, _ = select.select([self.sock], [], [], self.every)
                    if readable:
                        self.answer = self.sock.recv(65536)
                        self.cut = self.answer == b""
                        return
                except OSError:
                    self.cut = True
                    return


def test_slowloris_is_cut_at_the_header_timeout_and_starves_no_one(site):
    """Heads trickled a byte every 0.25 s (about 60 s for the whole head) from one
    address: nginx holds them, not gunicorn; another client is answered meanwhile; each
    is closed at client_header_timeout (10 s), with no answer, well before its head ends."""
    front, web = site
    slow = [Trickler(front, every=0.25) for _ in range(3 * CONNECTIONS)]
    for client in slow:
        client.start()
    statuses = []
    while any(client.is_alive() for client in slow):
        statuses.append(_healthy(front))
        slow[0].join(0.1)  # about ten a second: within the other client's own rate
    for client in slow:
        client.join()
    assert all(client.cut and client.answer == b"" for client in slow)
    assert len(statuses) > 0
    assert set(statuses) == {"HTTP/1.1 200 OK"}
    assert "User-Agent" not in web.log.read_text()


# -- refused at once -------------------------------------------------------------------------


def test_a_chunk_size_beyond_the_body_limit_is_refused_at_once(site):
    """The head, a chunk-size line of 2 MiB (over RECECO_MAX_BODY_BYTES, 1 MiB) and the
    chunk's first byte; nothing more is sent, and 413 comes back. (nginx's parser reports
    a chunk with its first byte of data: on the size line alone it waits for that byte.)"""
    front, _ = site
    with _connect(front, CLIENT) as sock:
        sock.sendall(
            b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n200000\r\n{"
        )
        status, headers, body = _answer(sock)
    assert status == "HTTP/1.1 413 Request Entity Too Large"
    assert json.loads(body) == _envelope(
        413, "PAYLOAD_TOO_LARGE", "Request body is larger than the limit of 1048576 bytes (413 Payload Too Large)"
    )


def test_a_client_still_sending_a_refused_body_reads_the_answer(site):
    """Issue 26.7: a server that answers 413 and closes with the body unread resets the
    connection, and a client still sending could lose the answer. nginx drains what the
    client still sends (lingering_timeout, 5 s) before it closes; the pause makes the race
    certain."""
    front, _ = site
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    head = b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: chunked\r\n\r\n"
    with _connect(front, CLIENT, timeout=30) as sock:
        sock.sendall(head + chunk * 24)
        time.sleep(2.5)  # the answer is sent meanwhile
        sock.sendall(chunk * 24 + b"0\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        status, _, body = _answer(sock)
    assert status == "HTTP/1.1 413 Request Entity Too Large"
    assert json.loads(body)["error"]["data"] == {"code": "PAYLOAD_TOO_LARGE", "httpStatus": 413}


def test_a_content_length_beyond_the_body_limit_is_refused_before_the_body(site):
    front, _ = site
    status, _, body = _ask(
        front,
        CLIENT,
        b"POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1048577\r\n\r\n",
    )
    assert status == "HTTP/1.1 413 Request Entity Too Large"
    assert json.loads(body)["error"]["data"] == {"code": "PAYLOAD_TOO_LARGE", "httpStatus": 413}


def test_the_proxys_body_limit_is_the_services():
    from django.conf import settings

    assert re.findall(r"client_max_body_size (\d+)m;", shipped.TEMPLATE.read_text()) == [
        str(settings.RECECO_MAX_BODY_BYTES // (1024 * 1024))
    ]
    assert settings.RECECO_MAX_BODY_BYTES == 1024 * 1024


def test_a_head_with_bare_lf_line_ends_is_answered_at_once(site):
    """nginx reads a bare LF as a line end (RFC 9112 2.2 allows a recipient to): the head
    is whole at its blank line and answered at once, not held until a timeout. gunicorn
    never sees those line ends: nginx passes on a head of its own, CRLF, its framing
    (Content-Length) its own, so the two cannot read the request differently."""
    front, _ = site
    with _connect(front, CLIENT) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n")
        status, _, body = _answer(sock)
    assert status == "HTTP/1.1 200 OK"
    assert b'{"status": "ok"}' in body


HOST = b"Host: 127.0.0.1\r\n"
REFUSALS = [
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + HOST + b"\r\n", "HTTP/1.1 414 Request-URI Too Large",
     414, "PAYLOAD_TOO_LARGE",
     "The request line is longer than allowed: send large batches with POST (414 URI Too Long)"),
    (b"GET /healthz HTTP/1.1\r\n" + HOST + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n", "HTTP/1.1 431 ",
     431, "PAYLOAD_TOO_LARGE",
     "A request header is longer than allowed, or there are too many (431 Request Header Fields Too Large)"),
    (b"POST /api/trpc/voidReceipt HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: gzip\r\n\r\n",
     "HTTP/1.1 501 Not Implemented", 501, "INVALID_INPUT", "Unsupported Transfer-Encoding (501 Not Implemented)"),
    (b"GET /healthz HTTP/1.1\r\n" + HOST + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
     "HTTP/1.1 400 Bad Request", 400, "INVALID_INPUT", "Malformed HTTP request (400 Bad Request)"),
    (b"NOT HTTP\r\n\r\n", "HTTP/1.1 400 Bad Request", 400, "INVALID_INPUT", "Malformed HTTP request (400 Bad Request)"),
    (b"POST /api/trpc/voidReceipt HTTP/1.1\r\n" + HOST + b"Content-Length: abc\r\n\r\n{}",
     "HTTP/1.1 400 Bad Request", 400, "INVALID_INPUT", "Malformed HTTP request (400 Bad Request)"),
    (b"POST /api/trpc/voidReceipt HTTP/1.1\r\n" + HOST + b"Content-Length: -1\r\n\r\n{}",
     "HTTP/1.1 400 Bad Request", 400, "INVALID_INPUT", "Malformed HTTP request (400 Bad Request)"),
    (b"POST /api/trpc/voidReceipt HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
     "HTTP/1.1 400 Bad Request", 400, "INVALID_INPUT", "Malformed HTTP request (400 Bad Request)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("request_bytes", "status_line", "status", "code", "message"),
    REFUSALS,
    ids=["request line", "header", "transfer coding", "two lengths", "not http", "length abc", "length -1", "chunk"],
)
def test_what_the_proxy_refuses_is_the_apis_envelope_documented_on_every_path(
    site, request_bytes, status_line, status, code, message
):
    front, _ = site
    answer_status, headers, body = _ask(front, CLIENT, request_bytes)
    assert answer_status == status_line
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == _envelope(status, code, message)
    for item in document()["paths"].values():
        (operation,) = item.values()
        response = operation["responses"][str(status)]
        if "$ref" in response:
            response = document()["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
        assert response["description"].startswith(f"{code}: ")


def test_a_client_reads_an_oversized_header_as_431_with_the_envelope(site):
    """nginx has no reason phrase for 431 (its status line is "HTTP/1.1 431 ", which RFC
    9112 allows; docs/deployment.md says so): an HTTP client reads the status code and
    the envelope, whose message names the refusal."""
    front, _ = site
    connection = http.client.HTTPConnection("127.0.0.1", front.port, timeout=10, source_address=(CLIENT, 0))
    try:
        connection.request("GET", "/api/trpc/getReceipt", headers={"X-Big": "a" * 9000})
        response = connection.getresponse()
        answer = (response.status, response.reason, response.getheader("Content-Type"), json.loads(response.read()))
    finally:
        connection.close()
    assert answer == (431, "", "application/json", _envelope(431, "PAYLOAD_TOO_LARGE", REFUSALS[1][4]))


def test_an_expect_header_of_any_value_is_not_passed_on_so_never_refused_417(site):
    """gunicorn answers 417 to an Expect other than 100-continue; nginx passes on no Expect
    header (it answers 100-continue itself), so the service never does (no 417 in the
    OpenAPI document)."""
    front, web = site
    request = b"GET /healthz HTTP/1.1\r\n" + HOST + b"Expect: gzip\r\nConnection: close\r\n\r\n"
    assert _ask(front, CLIENT, request)[0] == "HTTP/1.1 200 OK"
    with socket.create_connection(("127.0.0.1", web.port), timeout=10) as sock:
        sock.sendall(request)
        assert _answer(sock)[0] == "HTTP/1.1 417 Expectation Failed"  # gunicorn alone would refuse it


def test_gunicorn_unreachable_is_503_with_retry_after(tmp_path):
    with closed_port() as port:
        front = shipped.start(tmp_path / "nginx", free_port(), f"127.0.0.1:{port}")
        try:
            status, headers, body = _ask(front, CLIENT, HEALTHZ)
        finally:
            front.stop()
    assert status == "HTTP/1.1 503 Service Temporarily Unavailable"
    assert headers["Retry-After"] == "5"
    # The proxy's access line: gunicorn, which logs the requests it serves, never saw it.
    line = rf'{re.escape(CLIENT)} "GET" 503 {len(body)} \d+\.\d{{3}} proxy\n'
    assert re.fullmatch(line, front.access_log.read_text())
    assert json.loads(body) == _envelope(
        503, "SERVICE_UNAVAILABLE", "The service is not answering; try again in a few seconds"
    )


# -- the client's address --------------------------------------------------------------------


def _metrics(front, source: str, forwarded: str = "") -> str:
    extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    request = f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n".encode()
    return _ask(front, source, request)[0]


def test_the_service_reads_the_clients_address_from_the_proxy(site):
    """RECECO_TRUSTED_PROXY_COUNT=1 behind the proxy: /metrics, allowed to 127.0.0.5 alone,
    is served to it, refused to another address, and refused to one that writes the
    allowed address in its own X-Forwarded-For (the proxy appends the real one)."""
    front, _ = site
    assert _metrics(front, METRICS_CLIENT) == "HTTP/1.1 200 OK"
    assert _metrics(front, "127.0.0.6") == "HTTP/1.1 403 Forbidden"
    assert _metrics(front, "127.0.0.6", forwarded=METRICS_CLIENT) == "HTTP/1.1 403 Forbidden"


def test_the_proxy_writes_no_path_in_its_logs(site):
    """Sign-in links carry their secret in the path, getReceipt its token in the query:
    nginx's access log has a line only for what it answered itself, without the path,
    and its error log no request line."""
    front, _ = site
    secret = "s3cr3t-locker-link-xyz"
    _ask(front, CLIENT, f"GET /app/my/link/1/{secret}?token={secret} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
    _ask(front, CLIENT, f"GET /{secret}".encode() + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")
    for path in (front.access_log, front.error_log):
        assert secret not in Path(path).read_text()
