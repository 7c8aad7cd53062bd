"""Domain errors raised by the receipts and merchants apps.

They say what went wrong in words a caller can act on; agentapi maps each class to
its tRPC code and HTTP status, and the customer pages to their own messages.
"""


class ReceiptError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidInput(ReceiptError):
    """The request is malformed: a missing or ill-typed field, a bad token."""


class Unauthorized(ReceiptError):
    """No usable API key where one is needed."""


class Forbidden(ReceiptError):
    """A valid caller that may not do this (another merchant's key, a suspended merchant)."""


class NotFound(ReceiptError):
    """No receipt or merchant by that reference."""


class NotYet(NotFound):
    """Not there yet (a receipt not yet in the log): ask again after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class Conflict(ReceiptError):
    """The request contradicts an earlier one (a token reused for a different sale)."""


class RateLimited(ReceiptError):
    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after
