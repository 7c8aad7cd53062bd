"""The HTTP client of webhooks: one POST to the endpoint's URL, and nothing else.

It connects to an address checked by webhooks.addresses (resolved once, checked, then
connected to: no second resolution that DNS rebinding could change), never follows a
redirect (a 3xx is an answer like any other, and not a success), sends no cookies and no
credentials, and gives up ``timeout`` seconds after it began, whatever the receiver does:
every step (connecting, the TLS handshake, sending, each read of the answer) may wait
only for what is left of that time, so a receiver that trickles its answer a byte at a
time is cut off at the deadline like one that never answers.
"""

import http.client
import io
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
    """POST ``body`` to ``url``; return the answer's status, whatever it is. Raises
    SendError, at the latest ``timeout`` seconds after the call."""
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
                # The handshake as a whole waits at most the socket's timeout (CPython's ssl
                # keeps one deadline for it), which is what is left.
                sock.settimeout(_left(deadline))
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
            connection = _Connection(parts.hostname, port, _DeadlineSocket(sock, deadline))
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
        if time.monotonic() >= deadline:  # cut off mid-answer: the deadline, whatever broke
            raise SendError(f"no answer within {timeout:g} s", _elapsed(started)) from None
        raise SendError(f"{type(exc).__name__}: {exc}"[:300], _elapsed(started)) from None
    return Answer(status, _elapsed(started))


class _DeadlineSocket:
    """The parts of a socket http.client uses, each call waiting only for what is left
    before the deadline."""

    def __init__(self, sock: socket.socket, deadline: float):
        self._sock, self._deadline = sock, deadline

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self._sock.settimeout(left)

    def sendall(self, data) -> None:
        self._arm()
        self._sock.sendall(data)

    def recv_into(self, buffer, nbytes: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes)

    def makefile(self, mode: str = "rb", *args, **kwargs) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self))

    def close(self) -> None:
        pass  # http.client closes it before the answer's body is read: post() closes the socket


class _Reader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket):
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._sock.recv_into(buffer, len(buffer))


class _Connection(http.client.HTTPConnection):
    """http.client over a socket already connected (and wrapped in TLS) to a checked address."""

    def __init__(self, host: str, port: int, sock: _DeadlineSocket):
        super().__init__(host, port)
        self.sock = sock

    def connect(self):  # never reconnect on its own, to an address nobody checked
        raise http.client.HTTPException("connection closed")


def _left(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
