"""Small helpers shared by the agent's and the emulator's HTTP servers."""

import json
import logging
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from receco_agent import __version__

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class Server(ThreadingHTTPServer):
    """A threading HTTP server whose close waits for requests in flight."""

    # Non-daemon request threads + block_on_close: server_close() lets a sale that is
    # being uploaded finish before the process exits.
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

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
