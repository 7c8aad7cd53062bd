"""The HTTP client of webhooks: one POST to the endpoint's URL, and nothing else.

It connects to an address checked by webhooks.addresses (resolved once, checked, then
connected to: no second resolution that DNS rebinding could change), and sends the request
with receco.lib.exchange: no redirect followed (a 3xx is an answer like any other, and not
a success), no cookies and no credentials, and no more than ``timeout`` seconds from the
look-up to the last byte of the answer, whatever the receiver does.
"""

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from receco.lib.exchange import NoAnswer, elapsed_ms, exchange
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
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        address = resolve(parts.hostname, port)[0]
    except AddressRefused as exc:
        raise SendError(str(exc), elapsed_ms(started)) from None
    except OSError as exc:
        raise SendError(f"{type(exc).__name__}: {exc}"[:300], elapsed_ms(started)) from None
    sent = {"User-Agent": USER_AGENT, "Content-Type": "application/json", **headers}
    try:
        answer = exchange(
            "POST", url, body, sent, timeout, address=address, max_answer_bytes=_MAX_ANSWER_BYTES, started=started
        )
    except NoAnswer as failure:
        raise SendError(str(failure), failure.duration_ms) from None
    return Answer(answer.status, answer.duration_ms)
