"""Whether the service is busy: while it is, a sale joins the queue instead of waiting on it.

A sale is uploaded at once when nothing is queued before it, and the POS waits for the
service's answer (at most SALE_UPLOAD_TIMEOUT). That is right while the service answers
in tens of milliseconds, and wrong while it is crowded (a city's tills reconnecting at
once): the POS would wait for a queue of other tills' requests, and add to it. So when
the service tells this agent to wait (503 or 429, with Retry-After), or answers it
slowly, the agent holds its sales back for a while: each new sale is stored, answered
``queued`` at once, and uploaded by the forwarder with the backlog. Once the hold has
passed, sales go up at once again.
"""

import threading
import time
from collections.abc import Callable

# An answer slower than this tells of a crowded service: the POS should not wait on it.
SLOW_SECONDS = 0.5
# How long sales are held back after a slow answer, or a refusal without Retry-After.
HOLD_SECONDS = 5.0
# A Retry-After longer than this holds sales no longer (the forwarder still obeys it).
MAX_HOLD_SECONDS = 300.0
BUSY_STATUSES = (429, 503)


class Busy:
    """The moment until which sales are held back, from what the service answered."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._until = 0.0
        self._lock = threading.Lock()

    def heard(self, seconds: float, status: int | None, retry_after: float | None = None) -> None:
        """The service answered a request ``status`` after ``seconds`` (status None: no
        answer came; that is the link's failure, which the back-off handles)."""
        if status in BUSY_STATUSES:
            hold = min(MAX_HOLD_SECONDS, max(retry_after or 0.0, HOLD_SECONDS))
        elif status is not None and seconds > SLOW_SECONDS:
            hold = HOLD_SECONDS
        else:
            return
        with self._lock:
            self._until = max(self._until, self._clock() + hold)

    def holding(self) -> bool:
        """Whether a new sale should join the queue rather than be uploaded at once."""
        return self._clock() < self._until
