"""The Python load generator (bench/loadgen.py), run as bench/run.py runs it when wrk is not
installed, against a small server of the test's own: it sends the scenario's requests over
keep-alive connections and prints wrk.lua's BENCH_RESULT line, failures counted."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.background import serve_in_background
from tests.bench.conftest import run_script

FIGURES = {"requests", "duration_us", "p50_us", "p90_us", "p99_us", "max_us"}
FAILURES = {"connect_errors", "read_errors", "write_errors", "status_errors", "timeouts"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the service's gunicorn
    status = 200

    def do_GET(self):
        token = json.loads(parse_qs(urlsplit(self.path).query)["input"][0])["token"]
        self.server.seen.append(("GET", urlsplit(self.path).path, token, self.headers.get("Authorization")))
        self._answer()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append(("POST", self.path, body["token"], self.headers.get("Authorization")))
        self._answer()

    def _answer(self):
        payload = b'{"result":{"data":{}}}'
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.seen, httpd.status = [], 200
    stop = serve_in_background(httpd)
    yield httpd
    stop()


def _result(out: str) -> dict:
    [line] = [line for line in out.splitlines() if line.startswith("BENCH_RESULT ")]
    return json.loads(line.removeprefix("BENCH_RESULT "))


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_it_reads_receipts_by_the_references_given(server, tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("ABC234\nrcpt_one\n")
    out = run_script(
        "loadgen.py", _url(server), "--connections", "2", "--duration", "5", "--max-requests", "20",
        "--mode", "get", "--refs", str(refs), "--auth", "Bearer rk_test_x",
    )  # fmt: skip
    result = _result(out)
    assert set(result) == FIGURES | FAILURES
    assert result["requests"] == 20
    assert {key: result[key] for key in FAILURES} == dict.fromkeys(FAILURES, 0)
    assert {(method, path, auth) for method, path, _, auth in server.seen} == {
        ("GET", "/api/trpc/getReceipt", "Bearer rk_test_x")
    }
    assert {token for *_, token, _ in server.seen} <= {"ABC234", "rcpt_one"}


def test_each_sale_carries_a_token_of_its_own(server):
    out = run_script(
        "loadgen.py", _url(server), "--connections", "2", "--duration", "5", "--max-requests", "20",
        "--mode", "create", "--run", "smoke", "--body", '{"token":"TOKEN","total_amount":100}',
    )  # fmt: skip
    assert _result(out)["requests"] == 20
    tokens = [token for _, path, token, _ in server.seen]
    assert len(set(tokens)) == 20
    assert all(token.startswith("bsmoket") for token in tokens)


def test_answers_other_than_success_are_counted(server, tmp_path):
    server.status = 503
    refs = tmp_path / "refs.txt"
    refs.write_text("ABC234\n")
    out = run_script(
        "loadgen.py", _url(server), "--connections", "1", "--duration", "5", "--max-requests", "3",
        "--mode", "get", "--refs", str(refs),
    )  # fmt: skip
    result = _result(out)
    assert (result["requests"], result["status_errors"]) == (3, 3)
