"""Operations against a real gunicorn with gunicorn.conf.py: metrics added up over several
workers (prometheus-client's multiprocess mode), JSON log lines, readiness without a
database."""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from receco.lib.signingkeys import OFF_REASON
from tests import databases
from tests.ops.conftest import samples
from tests.servers import forget_cache_prefix, free_port, start_gunicorn

WORKERS = 3
CALLS = 60


def _get(url: str, **headers) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:  # a generous timeout: the machine may be busy, and this is no measure of speed
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def metered(tmp_path_factory):
    """Three workers with metrics and JSON logs on."""
    folder = tmp_path_factory.mktemp("metered")
    database = databases.fresh(folder)
    directory = folder / "metrics"
    server = start_gunicorn(
        database, folder / "gunicorn.log", workers=WORKERS,
        RECECO_METRICS="1", PROMETHEUS_MULTIPROC_DIR=str(directory), RECECO_LOG_FORMAT="json",
    )  # fmt: skip
    server.metrics_dir = directory
    yield server
    server.stop()
    forget_cache_prefix()


def _workers(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def _not_found_count(server) -> float:
    status, _, body = _get(f"{server.url}/metrics")
    assert status == 200, body
    key = ("receco_requests_total", (("procedure", "getReceipt"), ("status", "404")))
    return samples(body.decode()).get(key, 0.0)


# getReceipt of a token that is not there: the failed look-up budget never refuses a
# token (it would a short code).
_MISSING_PATH = "/api/trpc/getReceipt?input=" + urllib.request.quote(json.dumps({"token": "rcpt_nosuch01_aaaaaa"}))


# Rounds of CALLS calls at most, until more than one worker has answered.
ROUNDS = 10


def _call_many(server, count: int) -> list[int]:
    """``count`` getReceipt calls that find nothing, 8 at a time; their statuses."""
    url = server.url + _MISSING_PATH
    with ThreadPoolExecutor(max_workers=8) as pool:  # a new connection each: the workers share them out
        return list(pool.map(lambda _: _get(url)[0], range(count)))


def test_the_counts_of_every_worker_add_up(metered):
    before = _not_found_count(metered)
    # gunicorn's buffering worker reads each connection in its own event loop, so no held
    # connection keeps a worker busy: which worker takes a connection is the kernel's
    # choice. Calls go on, a round at a time (a bounded number), until two workers have
    # answered some.
    calls = 0
    for _ in range(ROUNDS):
        assert _call_many(metered, CALLS) == [404] * CALLS
        calls += CALLS
        writers = {path.name for path in metered.metrics_dir.glob("counter_*.db")}
        if len(writers) >= 2:
            break
    assert len(writers) >= 2, writers  # the calls were answered by more than one worker
    assert _not_found_count(metered) == before + calls


def test_a_worker_that_exits_keeps_its_counts(metered):
    assert _call_many(metered, 24) == [404] * 24
    before = _not_found_count(metered)
    victim = _workers(metered.process.pid)[0]
    os.kill(victim, signal.SIGTERM)  # gunicorn replaces it; child_exit marks it dead
    deadline = time.monotonic() + 60
    while victim in _workers(metered.process.pid) or len(_workers(metered.process.pid)) < WORKERS:
        assert time.monotonic() < deadline, "the worker was not replaced"
        time.sleep(0.1)
    assert _not_found_count(metered) == before


def _logged(server, text: str) -> None:
    """Wait until an access line of the server's log holds ``text`` (it is written after the answer)."""
    deadline = time.monotonic() + 30
    while not any('"gunicorn.access"' in line and text in line for line in server.log.read_text().splitlines()):
        assert time.monotonic() < deadline, f"no access line with {text!r}"
        time.sleep(0.05)


def test_every_log_line_is_a_json_object_with_the_request_id(metered):
    status, headers, _ = _get(f"{metered.url}/api/trpc/noSuchProcedure", **{"X-Request-ID": "probe-7f3a.1"})
    assert status == 404
    assert headers["X-Request-ID"] == "probe-7f3a.1"
    _logged(metered, "probe-7f3a.1")  # the access line is written after the response
    lines = [line for line in metered.log.read_text().splitlines() if line.strip()]
    assert lines
    parsed = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in parsed)
    access = [entry["message"] for entry in parsed if entry["logger"] == "gunicorn.access"]
    assert any(line.endswith(" probe-7f3a.1") and '"GET /api/trpc/noSuchProcedure"' in line for line in access)


def test_the_access_log_leaves_receipt_references_out(metered):
    assert _get(f"{metered.url}/app/receipt/rcpt_secret01_aaaaaa?x=1")[0] == 404
    assert _get(f"{metered.url}/app/receipt/K7P2QX/qr.png")[0] == 404
    _logged(metered, "*/qr.png")
    text = metered.log.read_text()
    access = [json.loads(line)["message"] for line in text.splitlines() if '"gunicorn.access"' in line]
    assert any('"GET /app/receipt/*" 404' in line for line in access)
    assert any('"GET /app/receipt/*/qr.png" 404' in line for line in access)
    assert "rcpt_secret01_aaaaaa" not in text
    assert "K7P2QX" not in text


def test_readyz_says_the_database_does_not_answer(tmp_path):
    closed = f"postgres://postgres@127.0.0.1:{free_port()}/receco"
    server = start_gunicorn(closed, tmp_path / "gunicorn.log", DATABASE_CONNECT_TIMEOUT="1")
    try:
        assert _get(f"{server.url}/healthz")[0] == 200
        status, _, body = _get(f"{server.url}/readyz")
    finally:
        server.stop()
    assert status == 503
    assert json.loads(body) == {
        "status": "unavailable",
        "reason": "the database did not answer",
        "problems": {"database": "the database did not answer"},
        "details": {"log": "unknown: the database did not answer", "signing": OFF_REASON},  # the server has no key
    }


def _status_from(source: str, server, path: str) -> int:
    """The status of GET ``path`` sent from the local address ``source``."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60, source_address=(source, 0))
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def test_behind_a_dual_stack_bind_ipv4_clients_are_their_ipv4_address(tmp_path):
    """Issue 19.13: behind -b [::] IPv4 clients arrive as ::ffff:a.b.c.d, and all of them
    shared one /64 bucket, /metrics refused 127.0.0.1 and the log showed the mapped form."""
    database = databases.fresh(tmp_path)
    server = start_gunicorn(
        database, tmp_path / "gunicorn.log", host="[::]", access_log=True,
        RECECO_METRICS="1", PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"), RECECO_RATELIMIT_ANONYMOUS="3/m",
    )  # fmt: skip
    try:
        assert _status_from("127.0.0.1", server, "/metrics") == 200
        assert [_status_from("127.0.0.2", server, _MISSING_PATH) for _ in range(4)] == [404, 404, 404, 429]
        assert _status_from("127.0.0.3", server, _MISSING_PATH) == 404  # an allowance of its own
    finally:
        server.stop()
        forget_cache_prefix()
    access = [line for line in server.log.read_text().splitlines() if '"GET ' in line]
    assert [line.split()[0] for line in access] == ["127.0.0.1"] + ["127.0.0.2"] * 4 + ["127.0.0.3"]


def _listen_backlog(port: int) -> int:
    """The backlog of the socket listening on ``port`` (ss shows it as Send-Q)."""
    done = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[2])


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read the listen backlog")
def test_the_listen_queue_holds_a_crowd_of_connections(tmp_path):
    """gunicorn.conf.py's backlog (capped by net.core.somaxconn): tills reconnecting at once
    wait in it rather than be refused."""
    database = databases.fresh(tmp_path)
    server = start_gunicorn(database, tmp_path / "gunicorn.log")
    try:
        somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
        assert _listen_backlog(server.port) == min(4096, somaxconn)
    finally:
        server.stop()


def test_256_connections_opened_at_once_are_all_answered(tmp_path):
    """One worker, 256 clients connecting and sending at the same moment: every one is
    answered 200, none refused or reset."""
    database = databases.fresh(tmp_path)
    server = start_gunicorn(database, tmp_path / "gunicorn.log")
    sockets = []
    try:
        for _ in range(256):
            client = socket.socket()
            client.settimeout(60)
            client.connect(("127.0.0.1", server.port))
            sockets.append(client)
        for client in sockets:
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answers = []
        for client in sockets:
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
            answers.append(answer.split(b"\r\n", 1)[0])
            # Done with it, as a client is: the sync worker drains each closed connection
            # until its client closes too (gunicorn.util.close_graceful, up to 2 s each).
            client.close()
    finally:
        for client in sockets:
            client.close()
        server.stop()
    assert answers == [b"HTTP/1.1 200 OK"] * 256
