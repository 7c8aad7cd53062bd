"""gunicorn workers whose own refusals are the API's JSON error envelope, not an HTML page.

gunicorn answers some requests before Django sees them: a request line or a header over
its limits, a malformed Content-Length or chunk, a bad HTTP version. Its page for them
is HTML, which no API client can read. These workers answer the same statuses with the
envelope of every other failure (receco.lib.trpc); the request's path is not known
yet, so every such answer is the envelope, and it carries no ``path``.

Use them with ``worker_class = "receco.lib.gunicorn_workers.SyncWorker"`` (gunicorn.conf.py)
or ``...ThreadWorker``.
"""

import orjson
from gunicorn import util
from gunicorn.http import errors
from gunicorn.workers import gthread, sync

from receco.lib.trpc import ProcedureError, failure

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
