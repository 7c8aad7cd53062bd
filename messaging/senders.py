"""Sending side by side, a few at a time on each lane: the dispatcher's senders.

A lane is what one outside party serves (a webhook endpoint, the SMTP server, the SMS
provider). A dispatcher runs several senders; each takes one piece of work that is not
on a full lane, sends it, and takes the next, so a slow party holds at most ``per_lane``
senders and every other lane goes on. While any sender is still sending, the others look
again for new work, at growing intervals up to IDLE_MAX (huey's idle back-off): what
arrives meanwhile for another lane is sent at once, not after the slow party is done.
Nothing here knows what is sent: the outbox gives ``take`` and ``send``
(messaging.outbox.dispatch).
"""

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

logger = logging.getLogger(__name__)

IDLE_FIRST = 0.05  # seconds an idle sender waits before it looks again, doubled each time
IDLE_MAX = 1.0

# take(full lanes) -> (lane, work) or None when there is nothing to take
Take = Callable[[list[str]], tuple[str, object] | None]


class Lanes:
    """How many sends are under way on each lane in this process; at most ``per_lane``."""

    def __init__(self, per_lane: int):
        self.per_lane = per_lane
        self._busy: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, take: Take) -> tuple[str, object] | None:
        """Take work with ``take``, told which lanes are full, and count it on its lane.
        One at a time, so that two senders cannot both fill a lane's last place."""
        with self._lock:
            taken = take([lane for lane, count in self._busy.items() if count >= self.per_lane])
            if taken is not None:
                self._busy[taken[0]] += 1
            return taken

    def release(self, lane: str) -> None:
        with self._lock:
            self._busy[lane] -= 1
            if not self._busy[lane]:
                del self._busy[lane]

    def idle(self) -> bool:
        """Whether no send is under way."""
        with self._lock:
            return not self._busy


def run(
    senders: int,
    per_lane: int,
    until: float,
    take: Take,
    send: Callable[[object], object],
    finish: Callable[[], None],
) -> tuple[int, bool]:
    """Send until ``take`` finds nothing or ``until`` (time.monotonic()) has passed: with
    ``senders`` threads, or in this thread for one. ``finish`` ends each thread (its
    database connection). Returns how many were sent, and whether time ran out first."""
    lanes = Lanes(per_lane)
    counts: list[tuple[int, bool]] = []
    if senders <= 1:
        return _sender(lanes, until, take, send)

    def sender() -> None:
        try:
            counts.append(_sender(lanes, until, take, send))
        except Exception:  # a sender that cannot go on (the database): the others may
            logger.exception("a sender stopped")
        finally:
            finish()

    threads = [threading.Thread(target=sender, name=f"sender-{n}", daemon=True) for n in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(count for count, _ in counts), any(late for _, late in counts)


def _sender(lanes: Lanes, until: float, take: Take, send: Callable[[object], object]) -> tuple[int, bool]:
    sent, pause = 0, IDLE_FIRST
    while True:
        if time.monotonic() > until:
            return sent, True
        taken = lanes.take(take)
        if taken is None:
            if lanes.idle():
                return sent, False
            time.sleep(pause)  # others are sending: work may come meanwhile
            pause = min(pause * 2, IDLE_MAX)
            continue
        lane, work = taken
        try:
            send(work)
        finally:
            lanes.release(lane)
        sent, pause = sent + 1, IDLE_FIRST
