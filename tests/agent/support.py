"""Helpers for the agent's tests: a small real HTTP server standing in for the Receco
service (answering its envelopes), free ports, an agent served in a thread."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from receco_agent.agent import Agent
from receco_agent.config import Settings
from receco_agent.server import AgentServer

from tests.background import serve_in_background
from tests.servers import free_port

# Keys of the service's form with a right checksum (made by merchants.keys.generate_key).
TEST_KEY = "postest_wb6xQZ7p8Nezff3aCNnSogKIqOyeJWDNY4fLQ3TPI6qu3XsqNw"
LIVE_KEY = "poslive_OcBSbV4vs8mjYqIYPA4074GyeiDcaNet5IaZFPOVZEYl0rRprV"


def error_envelope(status: int, code: str, message: str, path: str = "createReceiptFromPOS") -> dict:
    return {
        "error": {
            "message": message,
            "code": -32603,
            "data": {"code": code, "httpStatus": status, "path": path},
        }
    }


@dataclass
class Reply:
    status: int
    body: object = None
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class FakeService:
    """Answers createReceiptFromPOS like the service: 200 with {id, token, short_code} and
    an idempotent replay for a known token; ``script`` replies come first when set."""

    url: str = ""
    requests: list[dict] = field(default_factory=list)
    receipts: dict[str, dict] = field(default_factory=dict)
    script: list[Reply] = field(default_factory=list)
    respond: Callable[[dict], Reply] | None = None
    assign_short_code: str | None = None
    call: Callable[[dict], Reply | None] | None = None  # answers one call of its own, or None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def tokens(self) -> list[str]:
        """The tokens of the calls received, in order, batched or not."""
        return [call["token"] for request in self.requests for call in calls_of(request)]

    def answer(self, request: dict) -> Reply:
        with self.lock:
            self.requests.append(request)
            if self.script:
                return self.script.pop(0)
        if self.respond is not None:
            return self.respond(request)
        if request["method"] != "POST":
            return Reply(405, error_envelope(405, "METHOD_NOT_SUPPORTED", "Method not supported"))
        if "?batch=1" in request["path"]:
            replies = [self.create(call) for call in calls_of(request)]
            statuses = {reply.status for reply in replies}
            return Reply(statuses.pop() if len(statuses) == 1 else 207, [reply.body for reply in replies])
        return self.create(request["json"])

    def create(self, body: dict) -> Reply:
        """Answer one createReceiptFromPOS call (``call`` first, when set)."""
        if self.call is not None:
            reply = self.call(body)
            if reply is not None:
                return reply
        with self.lock:
            if body["token"] not in self.receipts:
                short = self.assign_short_code or body["short_code"]
                self.receipts[body["token"]] = {
                    "id": len(self.receipts) + 1,
                    "token": body["token"],
                    "short_code": short,
                }
            data = self.receipts[body["token"]]
        return Reply(
            200,
            {
                "result": {
                    "data": {
                        **data,
                        "receipt_url": f"http://web.test/app/receipt/{data['token']}",
                    }
                }
            },
        )


def calls_of(request: dict) -> list[dict]:
    """The inputs of a request's calls: the body of a single call, the values of a batch."""
    document = request.get("json")
    if "?batch=1" in request["path"] and isinstance(document, dict):
        return [document[str(i)] for i in range(len(document))]
    return [document] if isinstance(document, dict) else []


def service_handler(service: FakeService):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            request = {
                "method": method,
                "path": self.path,
                "headers": dict(self.headers),
                "raw": raw,
                "json": parsed,
            }
            reply = service.answer(request)
            if reply.delay:
                threading.Event().wait(reply.delay)
            body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if "Content-Type" not in reply.headers:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            self._serve("POST")

        def do_GET(self):
            self._serve("GET")

    return Handler


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that timed out on purpose closes before the reply: not a test failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_settings(home: Path, api_url: str, **overrides) -> Settings:
    values = {
        "merchant_id": "test-shop",
        "api_url": api_url,
        "web_url": "http://web.test",
        "port": free_port(),
        "print_qr": False,
    }
    values.update(overrides)
    return Settings(home=home, **values)


@dataclass
class RunningAgent:
    agent: Agent
    server: AgentServer
    url: str
    stop_server: Callable[[], None]


def run_agent_server(settings: Settings, forwarder: bool) -> RunningAgent:
    agent = Agent(settings)
    server = AgentServer(agent, port=settings.port)
    stop_server = serve_in_background(server)
    if forwarder:
        agent.forwarder.start()
    return RunningAgent(agent, server, f"http://127.0.0.1:{settings.port}", stop_server)


def stop_agent_server(running: RunningAgent) -> None:
    running.stop_server()
    running.agent.forwarder.stop(10)


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, interval: float = 0.05) -> object:
    """Return predicate()'s first truthy value; fail the test after ``timeout`` seconds."""
    event = threading.Event()
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        event.wait(interval)


def post_json(
    url: str,
    document: object,
    headers: dict | None = None,
    raw: bytes | None = None,
    timeout: float = 30,
):
    """POST JSON; return (status, decoded answer, headers)."""
    data = raw if raw is not None else json.dumps(document).encode()
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def get_json(url: str, timeout: float = 10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, json.loads(response.read())


def clean_environment() -> dict:
    """This process's environment without RECECO_* settings (the Django test settings set some)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("RECECO_")}


def agent_command() -> list[str]:
    """The installed ``receco-agent`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("receco-agent")
    return [str(script)] if script.exists() else [sys.executable, "-m", "receco_agent"]


class AgentProcess:
    """``receco-agent start`` as a child process with its own home, stopped by the test."""

    def __init__(self, home: Path, env: dict):
        self.home = home
        self.env = env
        self.port = int(env["RECECO_AGENT_PORT"])
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.runs = 0

    def start(self, **overrides: str) -> "AgentProcess":
        env = {**clean_environment(), **self.env, "RECECO_AGENT_HOME": str(self.home), **overrides}
        self.runs += 1
        log = (self.home.parent / f"agent-{self.runs}.log").open("wb")
        self.process = subprocess.Popen([*agent_command(), "start"], env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_until(self._healthy, timeout=20)
        return self

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            pytest.fail(f"the agent exited with {self.process.returncode}: {self.log()}")
        try:
            return get_json(f"{self.url}/health", timeout=2)[0] == 200
        except OSError:
            return False

    def health(self) -> dict:
        return get_json(f"{self.url}/health")[1]

    def log(self) -> str:
        return (self.home.parent / f"agent-{self.runs}.log").read_text(errors="replace")

    def kill9(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self, timeout: float = 30) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def run_cli(home: Path, *args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``receco-agent <args>`` with ``home`` and return the finished process.

    Its agent port is a free one unless ``env`` names one: an agent that runs on the
    default port (3001) on this machine is none of the test's business.
    """
    full_env = {
        **clean_environment(),
        "RECECO_AGENT_HOME": str(home),
        "RECECO_AGENT_PORT": str(free_port()),
        **(env or {}),
    }
    return subprocess.run(
        [*agent_command(), *args], env=full_env, capture_output=True, text=True, timeout=timeout, check=False
    )


# Straight to the address asked, never through a proxy of the environment (the test
# proxies below would otherwise send their own requests through themselves).
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _relay(request: urllib.request.Request, timeout: float) -> tuple[int, bytes]:
    """Send ``request`` on for a test proxy; return the status and body of the answer, an error's included."""
    try:
        with _DIRECT.open(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class HoldingProxy:
    """Forwards requests to ``target`` (an origin); the answer to the ``hold_post``-th POST
    is held back until release(), so a test can kill the agent after the service acted
    but before the agent heard of it."""

    def __init__(self, target: str, hold_post: int):
        self.target = target
        self.hold_post = hold_post
        self.posts = 0
        self.held = threading.Event()
        self.released = threading.Event()
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                request = urllib.request.Request(proxy.target + self.path, data=body, headers=headers, method=method)
                status, answer = _relay(request, timeout=30)
                if method == "POST":
                    with proxy._lock:
                        proxy.posts += 1
                        hold = proxy.posts == proxy.hold_post
                    if hold:
                        proxy.held.set()
                        proxy.released.wait(30)
                        self.close_connection = True
                        return  # the agent never hears the answer
                _send_json(self, status, answer)

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._stop_server = serve_in_background(self.server)

    def close(self) -> None:
        self.released.set()
        self._stop_server()


class ForwardProxy:
    """An HTTP proxy as a shop's network may have one: forwards plain-HTTP requests made
    to it in absolute form, and refuses CONNECT tunnels with 403; records each request's
    first line and its Proxy-Authorization header."""

    def __init__(self):
        self.seen: list[tuple[str, str | None]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_CONNECT(self):
                proxy.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.close_connection = True

            def do_POST(self):
                proxy.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-authorization", "host")}
                request = urllib.request.Request(self.path, data=body, headers=headers, method="POST")
                _send_json(self, *_relay(request, timeout=10))

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.close = serve_in_background(self.server)
