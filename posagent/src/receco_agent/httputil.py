"""Small helpers shared by the agent's and the emulator's HTTP servers."""

import json
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from receco_agent import __version__

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class Stopping(Exception):
    """The server is shutting down and takes no new work."""


class Server(ThreadingHTTPServer):
    """A threading HTTP server that can wait for the requests it is working on."""

    # Idle keep-alive connections must not hold the process open at shutdown, so request
    # threads are daemons; wait_idle() is what lets a sale being uploaded finish.
    daemon_threads = True
    block_on_close = False
    # On Windows SO_REUSEADDR would let a second agent bind the same port.
    allow_reuse_address = sys.platform != "win32"
    # socketserver's default backlog of 5 reset connections when a busy till's POS (or
    # several) opened dozens at once; the kernel caps it at net.core.somaxconn.
    request_queue_size = 1024

    def __init__(self, *args, **kwargs):
        self._active = 0
        self._stopping = False
        self._idle = threading.Condition()
        super().__init__(*args, **kwargs)

    @contextmanager
    def working(self) -> Iterator[None]:
        """Mark a request as being worked on until the block ends.

        Raises Stopping once stop() was called, so no new work starts during shutdown.
        """
        with self._idle:
            if self._stopping:
                raise Stopping
            self._active += 1
        try:
            yield
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def stop(self, timeout: float) -> bool:
        """Stop accepting work and wait for the work in progress; False if ``timeout`` passed first."""
        self.shutdown()
        with self._idle:
            self._stopping = True
            return self._idle.wait_for(lambda: self._active == 0, timeout)

    def handle_error(self, request, client_address) -> None:
        # socketserver prints tracebacks to stderr; route them through logging instead.
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.debug("Client %s went away: %s", client_address[0], error)
        else:
            log.exception("Error while answering %s", client_address[0])


class Handler(BaseHTTPRequestHandler):
    """Base handler: JSON answers, logging through ``logging``, Host and body checks."""

    server_version = f"receco-agent/{__version__}"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    # A connection silent this long is closed, so stuck clients do not pile up threads.
    timeout = 60

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own errors (bad request line, unsupported method) answer HTML;
        # the POS gets the same JSON shape as for every other error.
        self.close_connection = True
        with suppress(OSError):
            self.send_error_json(code, message or self.responses.get(code, ("Error",))[0])

    def log_message(self, format: str, *args) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def send_json(self, status: int, document: dict, headers: dict | None = None) -> None:
        """Answer ``document`` as JSON with ``status``."""
        body = json.dumps(document).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status: int, message: str) -> None:
        """Answer ``{"status": "error", "error": message}``."""
        self.send_json(status, {"status": "error", "error": message})

    def host_allowed(self) -> bool:
        """Refuse other Host names on a loopback server, so a web page cannot reach it by DNS rebinding."""
        bound = self.server.server_address[0]
        if bound not in ("127.0.0.1", "::1", "localhost"):
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name in LOOPBACK_HOSTS:
            return True
        self.close_connection = True
        self.send_error_json(400, f"Unexpected Host header {host!r}: use 127.0.0.1 or localhost")
        return False

    def read_json_body(self, limit: int) -> bytes | None:
        """Return the request body, or answer the error and return None.

        Requires Content-Type application/json (which a foreign web page cannot send
        without a CORS preflight this server never grants) and a Content-Length <= limit.
        """
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            self.close_connection = True
            self.send_error_json(415, "Content-Type must be application/json")
            return None
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self.send_error_json(400, "Chunked request bodies are not supported; send a Content-Length")
            return None
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            self.send_error_json(400, "Content-Length header is required")
            return None
        if int(length) > limit:
            # The body is not read; closing the connection discards it.
            self.close_connection = True
            self.send_error_json(400, f"Request body is larger than {limit} bytes")
            return None
        return self.rfile.read(int(length))
