"""The tRPC-style HTTP router: one view for every path under /api/trpc/.

Single calls: ``GET /api/trpc/getReceipt?input=<json>``, ``POST /api/trpc/createReceiptFromPOS``
with a JSON body. Batches (httpBatchLink): ``/api/trpc/a,b?batch=1`` with the inputs
keyed ``{"0": ..., "1": ...}`` in ``input`` (GET) or the body (POST), answered by a
JSON array in call order, 207 when the statuses differ.
"""

import logging
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

from agentapi.procedures import Call
from merchants.admission.admit import admit
from merchants.admission.limits import RateLimitExceeded, RateState
from receco.errors import ReceiptError
from receco.lib.addresses import client_ip
from receco.lib.trpc import PROCEDURES, ProcedureError, failure, success

logger = logging.getLogger(__name__)

_MISSING = object()
# The most calls one batch may hold, over GET and POST alike. A GET batch of this many
# getReceipt calls with the longest tokens is a request line of about 5.8 KB, within
# gunicorn's limit_request_line of 8190 (gunicorn.conf.py) and common proxies' 8 KB.
MAX_BATCH_CALLS = 50


class Outcome(NamedTuple):
    body: dict
    status: int
    retry_after: int | None
    limits: RateState | None  # where a live key stands, for the RateLimit headers


def trpc(request: HttpRequest, path: str) -> HttpResponse:
    names = path.split(",")
    query = _query(request)
    batch = query.get("batch") in ("1", "true")
    if len(names) > MAX_BATCH_CALLS:
        message = f"A batch may hold at most {MAX_BATCH_CALLS} calls, not {len(names)}"
        return respond_error(ProcedureError("INVALID_INPUT", message), None)
    try:
        inputs = _read_inputs(request, query, batch, len(names))
    except ProcedureError as error:
        inputs = [error] * len(names)
    if not batch:
        outcome = _run(request, names[0] if len(names) == 1 else path, inputs[0])
        response = _respond(outcome.body, outcome.status, outcome.retry_after, outcome.limits)
    else:
        results = [_run(request, name, value) for name, value in zip(names, inputs, strict=True)]
        statuses = {outcome.status for outcome in results}
        status = statuses.pop() if len(statuses) == 1 else 207
        retry_after = max((outcome.retry_after for outcome in results if outcome.retry_after), default=None)
        limits = next((outcome.limits for outcome in reversed(results) if outcome.limits), None)
        response = _respond([outcome.body for outcome in results], status, retry_after, limits)
    if response.status_code == 405:
        # The methods of the procedures called (RFC 9110, 15.5.6): GET for a query, POST for a mutation.
        methods = {PROCEDURES[name].method for name in names if name in PROCEDURES}
        response["Allow"] = ", ".join(sorted(methods))
    return response


def _query(request: HttpRequest) -> dict[str, str]:
    """The query string's parameters, the last of each name as QueryDict.get gives it,
    read without building a QueryDict: every GET call reads it."""
    raw = request.META.get("QUERY_STRING", "")
    if not raw.isascii():  # undecoded UTF-8, which the WSGI server gave as latin-1 (PEP 3333)
        raw = raw.encode("latin-1", "replace").decode("utf-8", "replace")
    if raw.startswith("input=") and "&" not in raw and "+" not in raw:
        return {"input": unquote(raw[6:])}  # a single call's query, as parse_qsl reads it
    try:
        fields = parse_qsl(raw, keep_blank_values=True, max_num_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)
    except ValueError:  # more fields than that: no call reads them
        return {}
    return dict(fields)


def _read_inputs(request: HttpRequest, query: dict[str, str], batch: bool, count: int) -> list:
    """Return one parsed input per call (_MISSING where none was sent)."""
    if request.method == "POST":
        raw = _read_body(request)
        source = "request body"
    else:
        raw = query.get("input", "")
        source = "input parameter"
    if not raw.strip():
        return [_MISSING] * count
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProcedureError("INVALID_INPUT", f"The {source} is not valid JSON: {exc}") from None
    if not batch:
        return [value]
    if not isinstance(value, dict):
        raise ProcedureError("INVALID_INPUT", f'A batch {source} must be a JSON object keyed "0", "1", ...')
    return [value.get(str(index), _MISSING) for index in range(count)]


def _read_body(request: HttpRequest) -> str:
    limit = settings.RECECO_MAX_BODY_BYTES
    too_large = ProcedureError("PAYLOAD_TOO_LARGE", f"Request body is larger than the limit of {limit} bytes")
    if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        # No Content-Length: Django reads such a body as empty. The server (gunicorn)
        # decodes the chunks as they are read; read one byte past the limit to see it passed.
        try:
            body = request.META["wsgi.input"].read(limit + 1)
        except Exception:  # the server's own error for a malformed chunk or a dropped connection
            raise ProcedureError("INVALID_INPUT", "The chunked request body is malformed or incomplete") from None
        if len(body) > limit:
            raise too_large
    else:
        try:
            if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
                raise too_large
            body = request.body
        except (RequestDataTooBig, ValueError):
            raise too_large from None
    try:
        return body.decode()
    except UnicodeDecodeError:
        raise ProcedureError("INVALID_INPUT", "The request body is not UTF-8 text") from None


def _run(request: HttpRequest, name: str, value) -> Outcome:
    """Call one procedure: check the address, then admit the caller (key, limits), then the input."""
    limits = None
    try:
        procedure = PROCEDURES.get(name)
        if procedure is None:
            raise ProcedureError("NOT_FOUND", f'No procedure named "{name}"')
        if request.method != procedure.method:
            raise ProcedureError(
                "METHOD_NOT_SUPPORTED",
                f"{name} is a {procedure.kind}: call it with {procedure.method}, not {request.method}",
            )
        try:
            admission = admit(request.META.get("HTTP_AUTHORIZATION"), client_ip(request))
        except RateLimitExceeded as exc:
            limits = exc.state
            raise
        limits = admission.rate_state
        if isinstance(value, ProcedureError):
            raise value
        data = procedure.func(Call(request, name, None if value is _MISSING else value, admission))
        return Outcome(success(data), 200, None, limits)
    except ReceiptError as exc:
        error = ProcedureError.from_domain(exc)
    except ProcedureError as exc:
        error = exc
    except (OperationalError, InterfaceError):
        logger.warning("Database unavailable in procedure %s", name, exc_info=True)
        error = ProcedureError.database_unavailable()
    except Exception as exc:
        logger.exception("Unexpected error in procedure %s", name)
        detail = f": {type(exc).__name__}: {exc}" if settings.DEBUG else ""
        error = ProcedureError("INTERNAL_SERVER_ERROR", f"Internal server error{detail}")
    return Outcome(failure(error, name), error.http_status, error.retry_after, limits)


def respond_error(error: ProcedureError, path: str | None) -> HttpResponse:
    """Answer a single error envelope (also used for failures outside the router)."""
    return _respond(failure(error, path), error.http_status, error.retry_after)


def _respond(body, status: int, retry_after: int | None, limits: RateState | None = None) -> HttpResponse:
    response = HttpResponse(orjson.dumps(body), status=status, content_type="application/json")
    if retry_after:
        response["Retry-After"] = str(retry_after)
    if limits is not None:
        for header, value in limits.headers().items():
            response[header] = value
    return response
