"""gunicorn workers: whole requests only, and refusals as the API's JSON error envelope.

``BufferingWorker`` (gunicorn.conf.py's) reads each request whole, head and body, in an
event loop before it spends any time on it: a sync worker reads from the client while it
serves, so four clients sending a byte every five seconds held every worker until
gunicorn killed them (slowloris). Here such a client holds only a socket; its request
must arrive whole within RECECO_REQUEST_READ_SECONDS (10) or it is answered 408; a body
over RECECO_MAX_BODY_BYTES is not waited for (the application refuses it, 413, from
what arrived). A request that waited more than RECECO_QUEUE_SECONDS (5) for its worker
once it had arrived whole (in the listen queue too; a client's own slow sending does not
count) is answered 503 with Retry-After rather than served: its client has given up or
is about to, and a crowd told to come back later backs off (the agent with jitter)
instead of timing out and sending again. Each whole request is then served as the sync
worker serves one (one at a time per process, the connection closed after the answer),
from the bytes read: the application never waits for a client. After the answer the
rest of what the client sends is drained in the event loop, not by the worker, so that
closing never resets the connection before the client has read the answer.

gunicorn answers some requests before Django sees them: a request line or a header over
its limits, a malformed Content-Length or chunk, a bad HTTP version. Its page for them
is HTML, which no API client can read. These workers answer the same statuses with the
envelope of every other failure (receco.lib.trpc); the request's path is not known
yet, so every such answer is the envelope, and it carries no ``path``.

Use them with ``worker_class = "receco.lib.gunicorn_workers.BufferingWorker"``
(gunicorn.conf.py), or ``...SyncWorker`` / ``...ThreadWorker`` for gunicorn's own.
"""

import contextlib
import errno
import os
import selectors
import socket
import struct
import sys
import time
from dataclasses import dataclass, field

import orjson
from gunicorn import http, util
from gunicorn.http import errors
from gunicorn.workers import gthread, sync

from receco.lib.env import envint
from receco.lib.requestframing import HEAD_TOO_LARGE, MORE, Incoming
from receco.lib.trpc import ProcedureError, failure


class RequestTimeout(Exception):
    """The request did not arrive whole in time."""

    def __init__(self, seconds: float):
        super().__init__(f"The request did not arrive whole within {seconds:g} s")


# gunicorn's statuses for what it refuses (gunicorn.workers.base.Worker.handle_error).
_REFUSALS = [
    (
        errors.LimitRequestLine,
        414,
        "URI Too Long",
        "PAYLOAD_TOO_LARGE",
        "The request line is longer than allowed: send large batches with POST",
    ),
    (
        errors.LimitRequestHeaders,
        431,
        "Request Header Fields Too Large",
        "PAYLOAD_TOO_LARGE",
        "A request header is longer than allowed, or there are too many",
    ),
    (errors.UnsupportedTransferCoding, 501, "Not Implemented", "INVALID_INPUT", "Unsupported Transfer-Encoding"),
    (errors.ExpectationFailed, 417, "Expectation Failed", "INVALID_INPUT", "Unsupported Expect header"),
    (errors.ForbiddenProxyRequest, 403, "Forbidden", "FORBIDDEN", "Proxy request forbidden"),
    (
        (errors.InvalidHeader, errors.InvalidHeaderName, errors.ObsoleteFolding),
        400,
        "Bad Request",
        "INVALID_INPUT",
        "Malformed request header (check Content-Length and Transfer-Encoding)",
    ),
    (
        (errors.InvalidChunkSize, errors.ChunkMissingTerminator, errors.InvalidChunkExtension),
        400,
        "Bad Request",
        "INVALID_INPUT",
        "Malformed chunked request body",
    ),
    (errors.ParseException, 400, "Bad Request", "INVALID_INPUT", "Malformed HTTP request"),
    (RequestTimeout, 408, "Request Timeout", "INVALID_INPUT", "The request did not arrive whole in time"),
]


def refusal(exc: BaseException) -> tuple[int, str, bytes] | None:
    """The status, reason and envelope body for what gunicorn refused with ``exc``; None
    for anything that is not a refusal of the request (an error of the application)."""
    if isinstance(exc, errors.InvalidResponseHeader | errors.InvalidResponseHeaderName):
        return None  # the application's fault, not the request's
    for kinds, status, reason, code, message in _REFUSALS:
        if isinstance(exc, kinds):
            envelope = failure(ProcedureError(code, f"{message} ({status} {reason})"), None)
            envelope["error"]["data"]["httpStatus"] = status  # 414 and 431 have no code of their own
            return status, reason, orjson.dumps(envelope)
    return None


class JsonRefusals:
    """Mixin for a gunicorn worker: its refusals answered as JSON envelopes."""

    def handle_error(self, req, client, addr, exc):
        answer = refusal(exc)
        if answer is None:
            return super().handle_error(req, client, addr, exc)
        status, reason, body = answer
        # gunicorn logs the client's address here; what was refused is enough to act on.
        self.log.warning("Invalid request refused with %s: %s: %s", status, type(exc).__name__, exc)
        head = (
            f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except OSError:
            self.log.debug("Failed to send the refusal")


class SyncWorker(JsonRefusals, sync.SyncWorker):
    pass


class ThreadWorker(JsonRefusals, gthread.ThreadWorker):
    pass


# The longest head waited for: gunicorn's own limits (limit_request_line,
# limit_request_field_size) refuse far shorter lines, this bounds how many there are.
MAX_HEAD_BYTES = 64 * 1024
# After an answer, what the client still sends is read and dropped for this long at most.
LINGER_SECONDS = 5.0
LINGER_BYTES = 64 * 1024 * 1024


@dataclass
class _Reading:
    """A connection whose request is arriving."""

    sock: socket.socket
    addr: object
    listener: socket.socket
    incoming: Incoming
    deadline: float
    # When the request's last bytes so far came: wall clock, as the kernel stamped them
    # (0.0 when it did not), and monotonic, as the worker's loop first saw them readable.
    stamped: float = 0.0
    seen: float = 0.0
    continued: bool = False  # "100 Continue" sent


@dataclass
class _Lingering:
    """A connection answered and half closed, drained until the client closes it."""

    sock: socket.socket
    deadline: float
    left: int = field(default=LINGER_BYTES)


def _limits() -> tuple[float, int, float]:
    """RECECO_REQUEST_READ_SECONDS, RECECO_MAX_BODY_BYTES and RECECO_QUEUE_SECONDS as the
    settings read them; as the environment gives them to an application without the
    settings (the benchmark's bare reference)."""
    from django.conf import settings

    if settings.configured:  # the application is loaded by now
        return (
            float(settings.RECECO_REQUEST_READ_SECONDS),
            settings.RECECO_MAX_BODY_BYTES,
            float(settings.RECECO_QUEUE_SECONDS),
        )
    return (
        float(envint("RECECO_REQUEST_READ_SECONDS", 10, minimum=1)),
        envint("RECECO_MAX_BODY_BYTES", 1024 * 1024),
        float(envint("RECECO_QUEUE_SECONDS", 5, minimum=0)),
    )


def _shed_counter():
    """What counts a request shed in the metrics (receco.ops.metrics, RECECO_METRICS); None
    for an application without the settings (the benchmark's bare reference)."""
    from django.conf import settings

    if not settings.configured:
        return None
    from receco.ops import metrics  # once the application is loaded: PROMETHEUS_MULTIPROC_DIR is set

    return metrics.requests_shed


# The kernel stamps what arrives on a socket with the time it came (SO_TIMESTAMP, which
# accepted sockets take from their listener; a read gives the stamp of the last bytes
# it took): a request that waited in the listen queue while every worker was busy has
# waited before any worker saw it. A connection queued before the worker set it (while
# it booted) is not stamped: the time the loop saw its bytes counts instead, so the
# requests that wait for a booting server are served, not shed.
SO_TIMESTAMP = getattr(socket, "SO_TIMESTAMP", 29) if sys.platform.startswith("linux") else None
_TIMESTAMP_SPACE = socket.CMSG_SPACE(16) if hasattr(socket, "CMSG_SPACE") else 0

# What a request that waited too long for its worker is told: come back in a moment.
BUSY_RETRY_AFTER = 2
BUSY_MESSAGE = "The service is busy; try again in a few seconds"
# A line in the error log at most this often while requests are shed.
SHED_LOG_SECONDS = 1.0


def busy_answer() -> bytes:
    """The whole HTTP answer to a request shed: 503 with Retry-After, the API's envelope."""
    envelope = failure(ProcedureError("SERVICE_UNAVAILABLE", BUSY_MESSAGE, BUSY_RETRY_AFTER), None)
    envelope["error"]["data"]["httpStatus"] = 503
    body = orjson.dumps(envelope)
    head = (
        f"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Retry-After: {BUSY_RETRY_AFTER}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def _arrival(ancillary: list) -> float:
    """The wall-clock time the kernel stamped on the bytes read (0.0 when it did not)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMP and len(data) >= 16:
            seconds, microseconds = struct.unpack("qq", data[:16])
            return seconds + microseconds / 1e6
    return 0.0


def _waited(connection: _Reading) -> float:
    """Seconds the whole request has waited for its worker: since its last bytes arrived,
    as the kernel stamped them (in the listen queue too), or else since the worker's loop
    saw them. Not since its first bytes: a client sending slowly (within
    RECECO_REQUEST_READ_SECONDS) waits for itself, not for the worker, and is served."""
    if connection.stamped:
        return max(0.0, time.time() - connection.stamped)
    return time.monotonic() - connection.seen


class BufferingWorker(JsonRefusals, sync.SyncWorker):
    def run(self):
        if self.cfg.is_ssl:
            raise RuntimeError("BufferingWorker serves plain HTTP: terminate TLS in front of gunicorn")
        self.read_seconds, self.max_body, self.queue_seconds = _limits()
        self.shed, self.shed_logged = 0, 0.0
        self.count_shed = _shed_counter()
        self.worker_connections = self.cfg.worker_connections
        self.reading: dict[int, _Reading] = {}
        self.lingering: dict[int, _Lingering] = {}
        self.poller = selectors.DefaultSelector()
        self.poller.register(self.PIPE[0], selectors.EVENT_READ, None)
        self.accepting = False
        self.stamping = False  # whether the kernel stamps what arrives (SO_TIMESTAMP)
        for listener in self.sockets:
            listener.setblocking(False)
            if SO_TIMESTAMP is not None and _TIMESTAMP_SPACE and self.queue_seconds:
                with contextlib.suppress(OSError):
                    listener.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
                    self.stamping = True
        try:
            while self.alive:
                self.notify()
                self._accept_while_room()
                self._wait(self._next_deadline())
                self._expire()
                self._log_shed()
                if not self.is_parent_alive():
                    break
        finally:
            self._log_shed(final=True)
            for connection in [*self.reading.values(), *self.lingering.values()]:
                util.close(connection.sock)
            self.poller.close()

    # -- the event loop --------------------------------------------------------------

    def _accept_while_room(self) -> None:
        room = len(self.reading) + len(self.lingering) < self.worker_connections
        if room == self.accepting:
            return
        for listener in self.sockets:
            if room:
                self.poller.register(listener, selectors.EVENT_READ, listener)
            else:
                self.poller.unregister(listener)
        self.accepting = room

    def _next_deadline(self) -> float:
        deadlines = [c.deadline for c in self.reading.values()] + [c.deadline for c in self.lingering.values()]
        return max(0.0, min([time.monotonic() + 1.0, *deadlines]) - time.monotonic())

    def _wait(self, timeout: float) -> None:
        try:
            events = self.poller.select(timeout)
        except OSError as exc:
            if exc.errno != errno.EINTR:
                raise
            return
        seen = time.monotonic()  # what is readable has waited for this worker since now at least
        for key, _ in events:
            target = key.data
            if target is None:
                with contextlib.suppress(OSError):
                    os.read(self.PIPE[0], 4096)
            elif isinstance(target, _Reading):
                self._read(target, seen)
            elif isinstance(target, _Lingering):
                self._drain(target)
            else:
                self._accept(target, seen)

    def _accept(self, listener: socket.socket, seen: float) -> None:
        # One connection per wake-up: the other workers, woken too, take the others, as
        # sync workers share them out; this one would serve a burst of them in turn.
        try:
            client, addr = listener.accept()
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ECONNABORTED):
                return
            raise
        client.setblocking(False)
        util.close_on_exec(client)
        incoming = Incoming(MAX_HEAD_BYTES, self.max_body)
        now = time.monotonic()
        connection = _Reading(client, addr, listener, incoming, now + self.read_seconds)
        self.reading[client.fileno()] = connection
        self.poller.register(client, selectors.EVENT_READ, connection)
        self._read(connection, seen)  # most requests are here already: no wait for the next wake-up

    def _read(self, connection: _Reading, seen: float) -> None:
        try:
            if self.stamping:
                data, ancillary, _, _ = connection.sock.recvmsg(65536, _TIMESTAMP_SPACE)
                connection.stamped = _arrival(ancillary) or connection.stamped
            else:
                data = connection.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away before its request was whole
            self._forget(connection)
            util.close(connection.sock)
            return
        connection.seen = seen
        state = connection.incoming.feed(data)
        if state == MORE:
            if connection.incoming.expects_continue and not connection.continued:
                connection.continued = True
                with contextlib.suppress(OSError):
                    connection.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            return
        self._forget(connection)
        if state == HEAD_TOO_LARGE:
            self._refuse(connection, errors.LimitRequestHeaders(f"head over {MAX_HEAD_BYTES} bytes"))
        elif self.queue_seconds and _waited(connection) > self.queue_seconds:
            self._shed(connection)
        else:
            self._serve(connection)

    def _drain(self, connection: _Lingering) -> None:
        try:
            data = connection.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        connection.left -= len(data)
        if not data or connection.left <= 0:
            self._close_lingering(connection)

    def _expire(self) -> None:
        now = time.monotonic()
        for connection in [c for c in self.reading.values() if c.deadline <= now]:
            self._forget(connection)
            self._refuse(connection, RequestTimeout(self.read_seconds))
        for connection in [c for c in self.lingering.values() if c.deadline <= now]:
            self._close_lingering(connection)

    def _forget(self, connection: _Reading) -> None:
        self.poller.unregister(connection.sock)
        del self.reading[connection.sock.fileno()]

    def _linger(self, sock: socket.socket) -> None:
        """Half close ``sock`` (the answer is sent) and drain it in the loop until the
        client closes it: closing with its bytes unread would reset the connection,
        and the client might lose the answer."""
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
        except OSError:
            util.close(sock)
            return
        connection = _Lingering(sock, time.monotonic() + LINGER_SECONDS)
        self.lingering[sock.fileno()] = connection
        self.poller.register(sock, selectors.EVENT_READ, connection)

    def _close_lingering(self, connection: _Lingering) -> None:
        self.poller.unregister(connection.sock)
        del self.lingering[connection.sock.fileno()]
        util.close(connection.sock)

    # -- serving a whole request ----------------------------------------------------

    def _shed(self, connection: _Reading) -> None:
        """Answer 503 to a request that waited too long for this worker, without serving it."""
        with contextlib.suppress(OSError):
            util.write_nonblock(connection.sock, busy_answer())
        self._linger(connection.sock)
        self.shed += 1
        if self.count_shed is not None:
            self.count_shed()
        self._log_shed()

    def _log_shed(self, final: bool = False) -> None:
        """Say in the error log how many requests were shed since it last said so: at most
        once a second, and those of the last second too (by the loop, or as it ends)."""
        now = time.monotonic()
        if self.shed and (final or now - self.shed_logged >= SHED_LOG_SECONDS):
            self.log.warning(
                "Busy: answered 503 to %d request(s) that waited over %g s for this worker",
                self.shed,
                self.queue_seconds,
            )
            self.shed, self.shed_logged = 0, now

    def _refuse(self, connection: _Reading, exc: Exception) -> None:
        self.handle_error(None, connection.sock, connection.addr, exc)
        self._linger(connection.sock)

    def _serve(self, connection: _Reading) -> None:
        """Serve the request read, as SyncWorker.handle does, but parsed from the bytes
        received (the application never reads from the client); the answer is written
        to the client with a bound on each write."""
        client, addr = connection.sock, connection.addr
        client.setblocking(True)
        client.settimeout(self.read_seconds)
        req = None
        try:
            parser = http.get_parser(self.cfg, [bytes(connection.incoming.data)], addr)
            req = next(parser)
            if connection.continued:
                req._expected_100_continue = False  # sent already, while the body came
            self.handle_request(connection.listener, req, client, addr)
        except errors.NoMoreData as exc:
            self.log.debug("Ignored an incomplete request. %s", exc)
        except StopIteration as exc:
            self.log.debug("Closing connection. %s", exc)
            return  # handle_request closed it
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN) and not isinstance(exc, TimeoutError):
                self.log.exception("Socket error processing request.")
            util.close(client)
            return
        except BaseException as exc:  # as SyncWorker.handle: gunicorn's refusals, the application's failures
            self.handle_error(req, client, addr, exc)
        self._linger(client)
