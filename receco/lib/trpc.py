"""The API's wire format (tRPC-style), for every layer that answers or counts its calls:
where the procedures live, which exist, their error codes and HTTP statuses, and the
two envelopes (docs/api.md, "Envelopes and errors").

The procedures are registered here by the API layer (agentapi.procedures, loaded by its
``AppConfig.ready()``), so that what runs below it (the operator's middleware, gunicorn's
workers) knows their names and answers in their envelope without importing it.

The procedures live at ``/api/trpc/<name>`` (batches: ``/api/trpc/a,b``). They are also
answered at ``/api/<name>``: the PHP SDK, configured with its documented base URL
``{origin}/api/trpc`` (no trailing slash), joins URLs the way Guzzle does and drops the
base's last segment. Only registered procedure names (and batches of them) are taken
there, so the rest of ``/api/`` stays free for other pages.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from receco import errors

API_PREFIX = "/api/trpc/"
SHORT_PREFIX = "/api/"

# --- The procedures -----------------------------------------------------------------


@dataclass(frozen=True)
class Procedure:
    kind: str  # "query" (GET) or "mutation" (POST)
    func: Callable[[Any], Any]  # called with the API layer's Call

    @property
    def method(self) -> str:
        return "GET" if self.kind == "query" else "POST"


PROCEDURES: dict[str, Procedure] = {}


def _register(kind: str, name: str):
    def decorator(func):
        PROCEDURES[name] = Procedure(kind, func)
        return func

    return decorator


def query(name: str):
    """Register ``func`` as a GET procedure named ``name``."""
    return _register("query", name)


def mutation(name: str):
    """Register ``func`` as a POST procedure named ``name``."""
    return _register("mutation", name)


def procedure_path(path: str) -> str | None:
    """What names the procedure(s) in ``path`` (``""`` for none), or None when ``path`` is
    not the API's."""
    if path.startswith(API_PREFIX):
        return path[len(API_PREFIX) :]
    if path == API_PREFIX[:-1]:
        return ""  # /api/trpc, no procedure named: the envelope, not a redirect
    if path.startswith(SHORT_PREFIX):
        rest = path[len(SHORT_PREFIX) :]
        if rest and all(name in PROCEDURES for name in rest.split(",")):
            return rest
    return None


def procedure_label(path: str) -> str | None:
    """The name a call to ``path`` is counted under: the procedure, "batch" for several,
    "unknown" for a name not registered; None when ``path`` is not the API's."""
    names = procedure_path(path)
    if names is None:
        return None
    if "," in names:
        return "batch"
    return names if names in PROCEDURES else "unknown"


# --- Errors -------------------------------------------------------------------------

HTTP_STATUS = {
    "INVALID_INPUT": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_SUPPORTED": 405,
    "CONFLICT": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "TOO_MANY_REQUESTS": 429,
    "INTERNAL_SERVER_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
}

# A database that cannot be reached or did not answer in time: the call may work again
# in a moment, so it is 503 with this Retry-After rather than a 500 (pages say so too:
# receco.lib.unavailable).
DATABASE_UNAVAILABLE = "The database is not answering; try again in a few seconds"
DATABASE_RETRY_AFTER = 5

_DOMAIN_CODES = {
    errors.InvalidInput: "INVALID_INPUT",
    errors.Unauthorized: "UNAUTHORIZED",
    errors.Forbidden: "FORBIDDEN",
    errors.NotFound: "NOT_FOUND",
    errors.Conflict: "CONFLICT",
    errors.RateLimited: "TOO_MANY_REQUESTS",
}


class ProcedureError(Exception):
    """A failure of the transport rather than the business: unknown procedure, wrong
    method, unreadable or oversized body. Also wraps domain errors for the router."""

    def __init__(self, code: str, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]

    @classmethod
    def database_unavailable(cls) -> "ProcedureError":
        return cls("SERVICE_UNAVAILABLE", DATABASE_UNAVAILABLE, DATABASE_RETRY_AFTER)

    @classmethod
    def from_domain(cls, exc: errors.ReceiptError) -> "ProcedureError":
        code = next(code for kind, code in _DOMAIN_CODES.items() if isinstance(exc, kind))
        return cls(code, exc.message, getattr(exc, "retry_after", None))


# --- Envelopes ----------------------------------------------------------------------

# JSON-RPC's "internal error", which the specification shows in every error body.
JSONRPC_ERROR_CODE = -32603


def success(data) -> dict:
    return {"result": {"data": data}}


def failure(error: ProcedureError, path: str | None) -> dict:
    data = {"code": error.code, "httpStatus": error.http_status}
    if path is not None:
        data["path"] = path
    return {"error": {"message": error.message, "code": JSONRPC_ERROR_CODE, "data": data}}
