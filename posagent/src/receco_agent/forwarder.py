"""The background thread that drains the queue, oldest sale first.

On a transient failure it stops the pass and waits (exponential back-off with jitter,
never less than the service's Retry-After); a refused sale is marked failed and the pass
goes on. It logs every unexpected error and keeps going; stop() only sets flags, and the
upload in flight is finished before the thread ends."""

import logging
import random
import threading
import time
from typing import TYPE_CHECKING

from receco_agent import client
from receco_agent.backoff import delay, next_wait

if TYPE_CHECKING:
    from receco_agent.agent import Agent

log = logging.getLogger(__name__)

# Idle polling also picks up rows added by other processes (e.g. 'retry-failed').
IDLE_SECONDS = 5.0
BATCH = 50
PRUNE_EVERY = 3600.0


class Forwarder:
    """Uploads pending sales of ``agent``'s queue in a thread of its own."""

    def __init__(self, agent: "Agent", timeout: float, rng: random.Random | None = None):
        self.agent = agent
        self.timeout = timeout
        self.failures = 0
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._retry_at: float | None = None
        self._last_prune = 0.0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start draining in a background thread."""
        self._thread = threading.Thread(target=self.run, name="receco-forwarder")
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the thread to end after the upload in flight, without waiting."""
        self._stop.set()
        self._wake.set()

    def stop(self, timeout: float | None = None) -> None:
        """Ask the thread to end after the upload in flight, and wait for it."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self, reset: bool = False) -> None:
        """Make the thread look at the queue now; ``reset`` also forgets the back-off."""
        with self._lock:
            if reset:
                self.failures = 0
        self._wake.set()

    def notify_queued(self) -> None:
        """A sale was queued: start on it unless a back-off is running."""
        with self._lock:
            waiting = self.failures > 0
        if not waiting:
            self._wake.set()

    def backlog_waiting(self) -> bool:
        """Whether the thread is sitting out a back-off."""
        with self._lock:
            return self.failures > 0

    def retry_in(self) -> float | None:
        """Seconds until the next try while backing off, else None."""
        with self._lock:
            if self._retry_at is None:
                return None
            return round(max(0.0, self._retry_at - time.monotonic()), 1)

    def run(self) -> None:
        """The loop: drain, wait, repeat until stop()."""
        try:
            summary = self.agent.outbox.summary()
            log.info("Forwarder started: %d sale(s) to upload, %d failed", summary["pending"], summary["failed"])
            self.agent.check_service()
        except Exception:
            log.exception("Starting the forwarder: checking the queue or the service failed")
        while not self._stop.is_set():
            try:
                wait = self.drain()
            except Exception:
                log.exception("Forwarder pass failed; trying again")
                with self._lock:
                    self.failures += 1
                    wait = delay(self.failures, self._rng)
            with self._lock:
                self._retry_at = time.monotonic() + wait if self.failures else None
            self._wake.wait(wait)
            self._wake.clear()
        log.info("Forwarder stopped")

    def drain(self) -> float:
        """Upload pending sales until the queue is empty or one fails transiently.

        Returns the seconds to wait before the next pass.
        """
        self._maybe_prune()
        while not self._stop.is_set():
            entries = self.agent.outbox.pending(BATCH)
            if not entries:
                with self._lock:
                    self.failures = 0
                return IDLE_SECONDS
            progressed = False
            for entry in entries:
                if self._stop.is_set():
                    return 0.0
                if not self.agent.claim(entry.token):
                    continue  # a sale thread is uploading it right now
                try:
                    answer = self.agent.upload(entry.token, entry.body, self.timeout, during_sale=False)
                finally:
                    self.agent.release(entry.token)
                progressed = True
                if answer.kind == client.TRANSIENT:
                    with self._lock:
                        self.failures += 1
                        wait = next_wait(self.failures, answer.retry_after, self._rng)
                    log.warning(
                        "Queue paused: %d failure(s) in a row, next try in %.1f s",
                        self.failures,
                        wait,
                    )
                    return wait
                with self._lock:
                    self.failures = 0
            if not progressed:
                return 0.2
        return 0.0

    def _maybe_prune(self) -> None:
        now = time.monotonic()
        if now - self._last_prune >= PRUNE_EVERY:
            self._last_prune = now
            removed = self.agent.outbox.prune()
            if removed:
                log.info(
                    "Removed %d confirmed sale(s) past retention from the queue",
                    removed,
                )
