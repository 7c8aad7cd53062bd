"""tRPC error codes, their HTTP statuses, and how domain errors map onto them."""

from receco import errors

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
# in a moment, so it is 503 with this Retry-After rather than a 500.
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
