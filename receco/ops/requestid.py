"""The request id: taken from a sane X-Request-ID or made, held for the current request
or task, and written on every log line (RequestIdFilter).

Tasks carry the id of the request that queued them (``current`` when queuing,
``restored`` in the worker), so one sale's lines can be followed into its deliveries.
"""

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar, Token

HEADER = "X-Request-ID"
META_KEY = "HTTP_X_REQUEST_ID"
MAX_LENGTH = 128
# What a proxy or client may give: letters, digits and a few separators, nothing that
# could forge a log line or carry an address.
_SANE = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_LENGTH}}}")

_current: ContextVar[str] = ContextVar("request_id", default="")


def sane(value: str | None) -> str | None:
    """``value`` if it may serve as a request id, else None."""
    if value and _SANE.fullmatch(value):
        return value
    return None


def new() -> str:
    """A fresh request id (32 hexadecimal digits: 128 random bits, as a UUID holds, made
    several times faster than uuid4)."""
    return os.urandom(16).hex()


def current() -> str:
    """The id of the request or task this thread is serving; "" outside of one."""
    return _current.get()


def begin(header: str | None) -> tuple[str, Token]:
    """Start serving a request whose X-Request-ID is ``header``: returns the id in use and
    the token to ``end`` it with."""
    value = sane(header) or new()
    return value, _current.set(value)


def end(token: Token) -> None:
    _current.reset(token)


@contextlib.contextmanager
def restored(request_id: str | None) -> Iterator[str]:
    """Serve under ``request_id`` (a new one when it is missing or not sane) until the block
    ends; yields the id in use."""
    value = sane(request_id) or new()
    token = _current.set(value)
    try:
        yield value
    finally:
        _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts ``request_id`` on every record ("-" outside a request or task)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get() or "-"
        return True
