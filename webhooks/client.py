"""The HTTP client of webhooks: one POST to the endpoint's URL, and nothing else.

It connects to an address checked by webhooks.addresses (resolved once, checked, then
connected to: no second resolution that DNS rebinding could change), never follows a
redirect (a 3xx is an answer like any other, and not a success), sends no cookies and no
credentials, and gives up after ``timeout`` seconds in all.
"""

import http.client
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from webhooks.addresses import AddressRefused, resolve

USER_AGENT = "Receco-Webhooks/1.0"
_MAX_ANSWER_BYTES = 4096  # the answer's body is read only this far, then dropped


@dataclass(frozen=True)
class Answer:
    status: int
    duration_ms: int


class SendError(Exception):
    """No answer: the address was refused, the connection failed or timed out."""

    def __init__(self, message: str, duration_ms: int):
        super().__init__(message)
        self.duration_ms = duration_ms


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST ``body`` to ``url``; return the answer's status, whatever it is. Raises SendError."""
    started = time.monotonic()
    deadline = started + timeout
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        family, address = resolve(parts.hostname, port)[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_left(deadline))
            sock.connect((address, port))
            if parts.scheme == "https":
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
            connection = _Connection(parts.hostname, port, sock)
            connection.default_port = 443 if parts.scheme == "https" else 80  # Host: without a default port
            connection.putrequest("POST", path, skip_accept_encoding=True)
            for name, value in {
                "User-Agent": USER_AGENT,
                "Content-Type": "application/json",
                "Content-Length": str(len(body)),
                **headers,
            }.items():
                connection.putheader(name, value)
            connection.endheaders(body)
            sock.settimeout(_left(deadline))
            response = connection.getresponse()
            response.read(_MAX_ANSWER_BYTES)
            status = response.status
        finally:
            sock.close()
    except AddressRefused as exc:
        raise SendError(str(exc), _elapsed(started)) from None
    except TimeoutError:
        raise SendError(f"no answer within {timeout:g} s", _elapsed(started)) from None
    except (OSError, http.client.HTTPException) as exc:
        raise SendError(f"{type(exc).__name__}: {exc}"[:300], _elapsed(started)) from None
    if time.monotonic() > deadline:
        raise SendError(f"no answer within {timeout:g} s", _elapsed(started))
    return Answer(status, _elapsed(started))


class _Connection(http.client.HTTPConnection):
    """http.client over a socket already connected (and wrapped in TLS) to a checked address."""

    def __init__(self, host: str, port: int, sock: socket.socket):
        super().__init__(host, port)
        self.sock = sock

    def connect(self):  # never reconnect on its own, to an address nobody checked
        raise http.client.HTTPException("connection closed")


def _left(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
