"""One HTTP request to an outside party, bounded as a whole: the service's way of calling
out (webhooks.client to merchants' endpoints, einvoicing.mbs to the tax authority).

``exchange`` gives up ``timeout`` seconds after it began, whatever the other side does:
every step (connecting, the TLS handshake, sending, each read of the answer) may wait
only for what is left of that time, so a party that trickles its answer a byte at a time
is cut off at the deadline like one that never answers. It never follows a redirect (a
3xx is an answer like any other) and sends only the headers it is given. It connects to
``address`` when the caller resolved and checked one (no second look-up that DNS
rebinding could change), else to what the host name resolves to.
"""

import http.client
import io
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes  # at most the ``max_answer_bytes`` asked for
    duration_ms: int


class NoAnswer(Exception):
    """No answer: the connection failed, or the deadline passed first."""

    def __init__(self, message: str, duration_ms: int):
        super().__init__(message)
        self.duration_ms = duration_ms


def exchange(
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
    *,
    address: tuple[int, str] | None = None,
    max_answer_bytes: int = 4096,
    started: float | None = None,
) -> Answer:
    """Send one ``method`` request to ``url`` with ``headers`` (and ``Content-Length`` when
    there is a body); return the answer's status and the first ``max_answer_bytes`` of its
    body. ``address`` is (family, IP address) to connect to; ``started`` is when the
    caller's clock for ``timeout`` began (time.monotonic(), by default now).

    Raises NoAnswer, at the latest ``timeout`` seconds after ``started``."""
    started = time.monotonic() if started is None else started
    deadline = started + timeout
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        if address is None:
            sock = socket.create_connection((parts.hostname, port), timeout=_left(deadline))
        else:
            sock = socket.socket(address[0], socket.SOCK_STREAM)
        try:
            if address is not None:
                sock.settimeout(_left(deadline))
                sock.connect((address[1], port))
            if parts.scheme == "https":
                # The handshake as a whole waits at most the socket's timeout (CPython's ssl
                # keeps one deadline for it), which is what is left.
                sock.settimeout(_left(deadline))
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
            connection = _Connection(parts.hostname, port, _DeadlineSocket(sock, deadline))
            connection.default_port = 443 if parts.scheme == "https" else 80  # Host: without a default port
            connection.putrequest(method, path, skip_accept_encoding=True)
            sent = dict(headers)
            if body is not None:
                sent["Content-Length"] = str(len(body))
            for name, value in sent.items():
                connection.putheader(name, value)
            connection.endheaders(body)
            response = connection.getresponse()
            content = response.read(max_answer_bytes)
            status = response.status
        finally:
            sock.close()
    except TimeoutError:
        raise NoAnswer(f"no answer within {timeout:g} s", elapsed_ms(started)) from None
    except (OSError, http.client.HTTPException) as exc:
        if time.monotonic() >= deadline:  # cut off mid-answer: the deadline, whatever broke
            raise NoAnswer(f"no answer within {timeout:g} s", elapsed_ms(started)) from None
        raise NoAnswer(f"{type(exc).__name__}: {exc}"[:300], elapsed_ms(started)) from None
    return Answer(status, content, elapsed_ms(started))


def elapsed_ms(started: float) -> int:
    """Milliseconds since ``started`` (time.monotonic())."""
    return int((time.monotonic() - started) * 1000)


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
        pass  # http.client closes it before the answer's body is read: exchange() closes the socket


class _Reader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket):
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._sock.recv_into(buffer, len(buffer))


class _Connection(http.client.HTTPConnection):
    """http.client over a socket already connected (and wrapped in TLS)."""

    def __init__(self, host: str, port: int, sock: _DeadlineSocket):
        super().__init__(host, port)
        self.sock = sock

    def connect(self):  # never reconnect on its own, to an address nobody checked
        raise http.client.HTTPException("connection closed")


def _left(deadline: float) -> float:
    return max(0.001, deadline - time.monotonic())
