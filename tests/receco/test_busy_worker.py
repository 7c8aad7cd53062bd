"""A request that waited too long for its worker is answered 503 with Retry-After rather
than served (RECECO_QUEUE_SECONDS): its client has given up or is about to, and a crowd
told to come back later backs off instead of timing out and sending again. Against a real
gunicorn with gunicorn.conf.py, one worker, held still (SIGSTOP) as a busy one is."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests import databases
from tests.ops.conftest import samples
from tests.servers import forget_cache_prefix, start_gunicorn

QUEUE_SECONDS = 3
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


pytestmark = pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to see the listen queue")


@pytest.fixture
def server(tmp_path):
    database = databases.fresh(tmp_path)
    server = start_gunicorn(
        database, tmp_path / "gunicorn.log", RECECO_QUEUE_SECONDS=str(QUEUE_SECONDS),
        RECECO_METRICS="1", PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"),
    )  # fmt: skip
    yield server
    server.stop()
    forget_cache_prefix()


def _worker(master: int) -> int:
    [pid] = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return int(pid)


def _answer(client: socket.socket) -> tuple[bytes, dict, bytes]:
    data = b""
    while chunk := client.recv(65536):
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status.encode(), headers, body


def _waiting_to_be_accepted(port: int) -> int:
    """Connections in the listen queue of ``port`` (ss shows them as Recv-Q)."""
    done = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[1])


def _served_once(server) -> None:
    """A request answered: the worker is up, past the connections queued while it booted
    (which the kernel has not stamped: their wait is counted from when the worker saw them)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as client:
        client.sendall(REQUEST)
        assert _answer(client)[0] == b"HTTP/1.1 200 OK"


def _waited(server, seconds: float) -> socket.socket:
    """A connection the worker accepted, whose request then waited ``seconds`` for it."""
    [client] = _all_waited(server, seconds, 1)
    return client


def _all_waited(server, seconds: float, count: int) -> list[socket.socket]:
    """``count`` connections the worker accepted, whose requests then waited ``seconds``."""
    _served_once(server)
    clients = []
    for _ in range(count):
        clients.append(socket.create_connection(("127.0.0.1", server.port), timeout=30))
        deadline = time.monotonic() + 30
        while _waiting_to_be_accepted(server.port) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the worker's loop accepted it; it then waits for the request
    worker = _worker(server.process.pid)
    os.kill(worker, signal.SIGSTOP)
    try:
        for client in clients:
            client.sendall(REQUEST)
        time.sleep(seconds)
    finally:
        os.kill(worker, signal.SIGCONT)
    return clients


def test_a_request_that_waited_too_long_is_answered_busy(server):
    with _waited(server, QUEUE_SECONDS + 0.5) as client:
        status, headers, body = _answer(client)
    assert status == b"HTTP/1.1 503 Service Unavailable"
    assert headers["Retry-After"] == "2"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {
        "error": {
            "message": "The service is busy; try again in a few seconds",
            "code": -32603,
            "data": {"code": "SERVICE_UNAVAILABLE", "httpStatus": 503},
        }
    }
    line = "Busy: answered 503 to 1 request(s) that waited over 3 s for this worker"
    deadline = time.monotonic() + 30  # the worker writes it after the answer
    while line not in server.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert line in server.log.read_text()


def _shed_count(server) -> float:
    """receco_requests_shed_total as /metrics says it (HTTP/1.0: the body not chunked)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as client:
        client.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, body = _answer(client)
    assert status == b"HTTP/1.0 200 OK"
    return samples(body.decode()).get(("receco_requests_shed_total", ()), 0.0)


def test_a_request_shed_is_counted_in_the_metrics(server):
    """gunicorn's error log says so once a second at most; the metrics count each one."""
    assert _shed_count(server) == 0.0
    with _waited(server, QUEUE_SECONDS + 0.5) as client:
        assert _answer(client)[0] == b"HTTP/1.1 503 Service Unavailable"
    assert _shed_count(server) == 1.0


def test_every_request_shed_is_said_in_the_log(server):
    """The log says it once a second at most: those shed within the second after a line
    are said by the next one, even when no request is shed after them."""
    clients = _all_waited(server, QUEUE_SECONDS + 0.5, 2)
    for client in clients:
        with client:
            assert _answer(client)[0] == b"HTTP/1.1 503 Service Unavailable"
    said = re.compile(r"Busy: answered 503 to (\d+) request\(s\)")
    deadline = time.monotonic() + 30
    while sum(map(int, said.findall(server.log.read_text()))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sum(map(int, said.findall(server.log.read_text()))) == 2
    assert _shed_count(server) == 2.0


def test_a_request_served_in_time_is_answered(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as client:
        client.sendall(REQUEST)
        status, _, body = _answer(client)
    assert status == b"HTTP/1.1 200 OK"
    assert b'"status": "ok"' in body or b'"status":"ok"' in body


def test_a_request_that_waited_in_the_listen_queue_is_answered_busy(server):
    """Every worker busy: the connection waits in the kernel's queue, where no worker has
    accepted it yet; the time its request arrived counts, not the time it was accepted."""
    _served_once(server)
    worker = _worker(server.process.pid)
    os.kill(worker, signal.SIGSTOP)
    try:
        client = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        client.sendall(REQUEST)
        time.sleep(QUEUE_SECONDS + 0.5)
    finally:
        os.kill(worker, signal.SIGCONT)
    with client:
        status, headers, _ = _answer(client)
    assert status == b"HTTP/1.1 503 Service Unavailable"
    assert headers["Retry-After"] == "2"


def test_a_slow_sender_within_the_read_limit_is_served(server):
    """A client whose request trickles in over more than RECECO_QUEUE_SECONDS (but within
    RECECO_REQUEST_READ_SECONDS) has waited for its own sending, not for the worker: its
    request is served, not shed. (The worker is up first: a connection queued while it
    boots is accepted late, which hid the mistake.)"""
    _served_once(server)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as client:
        client.sendall(REQUEST[:20])
        time.sleep(QUEUE_SECONDS + 0.5)
        client.sendall(REQUEST[20:])
        status, _, body = _answer(client)
    assert status == b"HTTP/1.1 200 OK"
    assert b'"status": "ok"' in body or b'"status":"ok"' in body
