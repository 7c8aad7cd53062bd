"""Which API key the API request now being served came with: the actor the audit trail
(merchants.audit) names for a refund or void made through the API. A context variable
tagged with the request's id, so that a value left from one request is never taken for
another's; setting it is all an API call pays."""

from contextvars import ContextVar

from receco.ops import requestid

_held: ContextVar[tuple[str, str] | None] = ContextVar("api_actor", default=None)


def key_used(prefix: str) -> None:
    """Remember that the current request came with the API key of ``prefix``."""
    _held.set((requestid.current(), prefix))


def current() -> str | None:
    """``API key <prefix>`` for the request being served, None when it came with no key."""
    held = _held.get()
    if held is None or not held[0] or held[0] != requestid.current():
        return None
    return f"API key {held[1]}"
