"""Slow clients (slowloris) hold no worker: replays issue 19.8 against a real gunicorn with
gunicorn.conf.py (two workers, as the review ran it). Four connections sending a body
one byte every few seconds made a getReceipt wait 39 s, and gunicorn killed both
workers."""

import json
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests import databases
from tests.servers import forget_cache_prefix, start_gunicorn

READ_SECONDS = 4
SALE = {
    "token": "rcpt_slowlor1_aaaaaa",
    "short_code": "SLOW01",
    "merchant_string_id": "test-slowloris",
    "total_amount": 2500,
    "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
}
GET_PATH = "/api/trpc/getReceipt?input=" + urllib.parse.quote(json.dumps({"token": "SLOW01"}))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("slowloris")
    database = databases.fresh(folder)
    server = start_gunicorn(database, folder / "gunicorn.log", workers=2, RECECO_REQUEST_READ_SECONDS=str(READ_SECONDS))
    request = urllib.request.Request(
        server.url + "/api/trpc/createReceiptFromPOS",
        json.dumps(SALE).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
    yield server
    server.stop()
    forget_cache_prefix()


def _workers(master: int) -> set[int]:
    return {int(pid) for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split()}


class Trickler(threading.Thread):
    """A client that sends a request's head, then its body one byte every ``every`` seconds."""

    def __init__(self, port: int, every: float, length: int = 1000):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.every, self.length = every, length
        self.answer = b""
        self.stop = threading.Event()

    def run(self):
        head = (
            "POST /api/trpc/createReceiptFromPOS HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {self.length}\r\n\r\n"
        )
        try:
            self.sock.sendall(head.encode())
            for _ in range(self.length):
                if self.stop.wait(self.every):
                    break
                self.sock.sendall(b" ")
        except OSError:
            pass  # answered and closed by the server
        finally:
            self.sock.settimeout(10)
            try:
                while chunk := self.sock.recv(65536):
                    self.answer += chunk
            except OSError:
                pass
            self.sock.close()


def _accepted(server) -> None:
    """Wait until no connection waits in the listen queue: the workers took them all."""
    deadline = time.monotonic() + 30
    while True:
        done = subprocess.run(["ss", "-Hltn", f"sport = :{server.port}"], capture_output=True, text=True, check=True)
        if int(done.stdout.split()[1]) == 0:  # Recv-Q: connections not accepted yet
            return
        assert time.monotonic() < deadline, "the workers did not take the slow connections"
        time.sleep(0.05)


def _get_receipt(server, timeout: float) -> int:
    with urllib.request.urlopen(server.url + GET_PATH, timeout=timeout) as response:
        return response.status


def test_slow_clients_hold_no_worker(server):
    workers = _workers(server.process.pid)
    slow = [Trickler(server.port, every=1.0) for _ in range(8)]
    for client in slow:
        client.start()
    try:
        _accepted(server)  # every slow connection has been taken by a worker
        # Before: each call waited for a worker held by a slow client (the review: 39 s),
        # past this timeout. A generous bound: the machine may be busy.
        statuses = [_get_receipt(server, timeout=5) for _ in range(20)]
    finally:
        for client in slow:
            client.stop.set()
            client.join(30)
    assert statuses == [200] * 20
    assert _workers(server.process.pid) == workers  # none killed
    assert "WORKER TIMEOUT" not in server.log.read_text()


def test_a_request_that_does_not_arrive_in_time_is_answered_408(server):
    client = Trickler(server.port, every=1.0)
    client.start()
    client.join(READ_SECONDS + 30)
    head, _, body = client.answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert json.loads(body) == {
        "error": {
            "message": "The request did not arrive whole in time (408 Request Timeout)",
            "code": -32603,
            "data": {"code": "INVALID_INPUT", "httpStatus": 408},
        }
    }


def test_a_slow_request_that_arrives_in_time_is_served(server):
    body = json.dumps({"token": "SLOW01", "email": "customer@example.com"}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            b"POST /api/trpc/updateReceiptContact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        for piece in (body[:10], body[10:20], body[20:]):
            time.sleep(0.5)
            sock.sendall(piece)
        answer = sock.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b'{"result":{"data":{"success":true,' in answer
