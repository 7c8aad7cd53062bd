"""The background thread that drains the queue, oldest sale first, in batches.

Pending rows go to the service as tRPC POST batches (up to BATCH_CALLS calls and
BATCH_BYTES a request), several requests in flight at once, so a backlog of thousands
drains in seconds even over a slow link. Each row leaves the queue only on its own
confirmation (a 200 or an idempotent replay); a refusal marks that row alone failed; a
row that fails transiently waits a back-off of its own while the rows behind it flow. When
no request gets through at all (no connection, timeouts), the whole queue waits
(exponential back-off with jitter, never less than the service's Retry-After). Each request
carries only the calls the service's rate limits allow now (pacing.Pacer), and the queue
waits for them rather than be refused. The thread logs every unexpected error and keeps
going; stop() only sets flags, and the requests in flight are finished before the thread
ends."""

import logging
import random
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol

from receco_agent import client
from receco_agent.backoff import delay, next_wait
from receco_agent.busy import BUSY_STATUSES, Busy
from receco_agent.config import Settings
from receco_agent.outbox import CREATE_RECEIPT, Entry, Outbox, Outcome
from receco_agent.pacing import Pacer

log = logging.getLogger(__name__)

# Idle polling also picks up rows added by other processes (e.g. 'retry-failed').
IDLE_SECONDS = 5.0
# The service answers a batch of more than 50 calls with one error, and refuses bodies
# over its RECECO_MAX_BODY_BYTES (1 MiB unless the operator changed it).
BATCH_CALLS = 50
BATCH_BYTES = 256 * 1024
# Requests in flight at once: enough to hide a 150 ms round trip, few enough for a small server.
IN_FLIGHT = 4
PRUNE_EVERY = 3600.0


def batches(entries: list[Entry], calls: int = BATCH_CALLS, size: int = BATCH_BYTES) -> list[list[Entry]]:
    """Split ``entries`` (in order) into batches of at most ``calls`` rows and about ``size``
    bytes; a row marked ``alone`` travels in a batch of its own."""
    result: list[list[Entry]] = []
    current: list[Entry] = []
    current_size = 0
    for entry in entries:
        length = len(entry.body.encode("utf-8")) + 8
        if entry.alone:
            if current:
                result.append(current)
                current, current_size = [], 0
            result.append([entry])
            continue
        if current and (len(current) >= calls or current_size + length > size):
            result.append(current)
            current, current_size = [], 0
        current.append(entry)
        current_size += length
    if current:
        result.append(current)
    return result


class Owner(Protocol):
    """What the forwarder needs of the agent that owns it."""

    settings: Settings
    outbox: Outbox
    pacer: Pacer
    busy: Busy

    def claim(self, token: str) -> bool: ...

    def release(self, token: str) -> None: ...

    def settle(self, entries: list[Entry], answer: list[client.Answer] | client.Answer) -> None: ...

    def check_service(self) -> None: ...


class Forwarder:
    """Uploads pending sales of ``agent``'s queue in a thread of its own."""

    def __init__(self, agent: Owner, timeout: float, rng: random.Random | None = None):
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
        self._draining = False
        self._paced = False  # the last pass stopped for the service's rate limits, rows waiting
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None

    def start(self) -> None:
        """Start draining in a background thread."""
        self._thread = threading.Thread(target=self.run, name="receco-forwarder")
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the thread to end after the requests in flight, without waiting."""
        self._stop.set()
        self._wake.set()

    def stop(self, timeout: float | None = None) -> None:
        """Ask the thread to end after the requests in flight, and wait for it."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=True)

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

    def draining(self) -> bool:
        """Whether the thread is uploading a backlog right now, or waiting for the service's
        rate limits to let it go on (a new sale joins the queue)."""
        return self._draining or self._paced

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
            # Sales made before the first pass queue behind the backlog too.
            self._draining = summary["pending"] > 0
            log.info("Forwarder started: %d sale(s) to upload, %d failed", summary["pending"], summary["failed"])
            if not self._draining:
                # With a backlog, its first upload tells as much, without spending a call of
                # the key's rate limit (with 3,000 sales, the probe's call cost a whole minute).
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
            finally:
                self._draining = False
            self.agent.outbox.checkpoint(force=True)
            with self._lock:
                self._retry_at = time.monotonic() + wait if self.failures else None
            self._wake.wait(wait)
            self._wake.clear()
        log.info("Forwarder stopped")

    def drain(self) -> float:
        """Upload due rows, IN_FLIGHT batches at a time, until none is left or the service
        stops answering. Returns the seconds to wait before the next pass."""
        self._maybe_prune()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="receco-upload")
        in_flight: dict[Future, list[Entry]] = {}
        blocked: list[client.Answer] = []
        paced: float | None = None
        try:
            while True:
                paced = None
                if not blocked and not self._stop.is_set():
                    paced = self._top_up(in_flight)
                if not in_flight:
                    break
                # Until a request is answered, or the rate limits let more calls go.
                finished, _ = wait(in_flight, timeout=paced or None, return_when=FIRST_COMPLETED)
                for future in finished:
                    group = in_flight.pop(future)
                    for entry in group:
                        self.agent.release(entry.token)
                    try:
                        result = future.result()
                    except BaseException:
                        self.agent.pacer.unused(len(group))
                        raise
                    self._heard(group, result)
                    self.agent.settle(group, result)
                    self.agent.outbox.checkpoint()  # here, not in a sale's commit
                    if isinstance(result, client.Answer) and client.service_wide(result):
                        blocked.append(result)
        finally:
            for group in in_flight.values():  # only after an unexpected error
                self.agent.pacer.unused(len(group))
                for entry in group:
                    self.agent.release(entry.token)
        self._draining = False
        self._paced = paced is not None and not blocked and not self._stop.is_set()
        if self._stop.is_set():
            return 0.0
        if self._paced:
            # Rows are due but the service's limits allow no call before then.
            return max(0.05, paced)
        if blocked:
            # The service or the link is down: the whole queue waits.
            retry_after = max((answer.retry_after or 0) for answer in blocked) or None
            with self._lock:
                self.failures += 1
                wait_for = next_wait(self.failures, retry_after, self._rng)
            log.warning("Queue paused: %d failure(s) in a row, next try in %.1f s", self.failures, wait_for)
            return wait_for
        with self._lock:
            self.failures = 0
        return self._idle_wait()

    def _top_up(self, in_flight: dict[Future, list[Entry]]) -> float | None:
        """Send batches of due rows until IN_FLIGHT requests are out (rows in flight are claimed),
        each with as many calls as the rate limits allow.

        Returns the seconds until the limits let more calls go when they hold due rows back
        (0.0: when a request in flight is answered), else None.
        """
        free = IN_FLIGHT - len(in_flight)
        if free <= 0:
            return None
        claimed = sum(len(group) for group in in_flight.values())
        rows = self.agent.outbox.pending(claimed + BATCH_CALLS * free)
        entries = [entry for entry in rows if self.agent.claim(entry.token)]
        sent: set[str] = set()
        held: float | None = None
        for group in batches(entries)[:free]:
            granted, wait_for = self.agent.pacer.grant(len(group))
            if not granted:
                held = wait_for or 0.0
                break
            group = group[:granted]
            self._draining = True
            in_flight[self._pool.submit(self._send, group)] = group
            sent.update(entry.token for entry in group)
            if granted < len(group):
                break
        for entry in entries:
            if entry.token not in sent:
                self.agent.release(entry.token)
        return held

    def _heard(self, group: list[Entry], result: list[client.Answer] | client.Answer) -> None:
        """Tell the pacer what the service answered to the request of ``group``."""
        if isinstance(result, client.Answer):  # one answer for the whole request
            refused = len(group) if result.status == 429 else 0
            limits, retry_after = result.limits, result.retry_after
        else:
            refused = sum(answer.status == 429 for answer in result)
            limits = result[0].limits
            retry_after = max((answer.retry_after or 0 for answer in result), default=0) or None
        self.agent.pacer.heard(len(group), limits, refused=refused, retry_after=retry_after)

    def _idle_wait(self) -> float:
        due = self.agent.outbox.next_due()
        if due is None:
            return IDLE_SECONDS
        return min(IDLE_SECONDS, max(0.05, due - time.time()))

    def _send(self, group: list[Entry]) -> list[client.Answer] | client.Answer:
        connection = getattr(self._local, "connection", None)
        settings = self.agent.settings
        if connection is None or connection.api_url != settings.api_url:
            connection = self._local.connection = client.Connection(settings.api_url, self.timeout)
        calls = [client.Call(entry.procedure, entry.token, entry.body) for entry in group]
        started = time.monotonic()
        result = client.call_batch(connection, settings.api_key, calls)
        took = time.monotonic() - started
        if isinstance(result, client.Answer):  # one answer for the whole request
            self.agent.busy.heard(took, result.status, result.retry_after)
        else:
            busy = [answer for answer in result if answer.status in BUSY_STATUSES]
            retry_after = max((answer.retry_after or 0 for answer in busy), default=0) or None
            self.agent.busy.heard(took, busy[0].status if busy else result[0].status, retry_after)
        return result

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


def outcome_of(entry: Entry, answer: client.Answer, rng: random.Random | None = None) -> Outcome:
    """Return what ``answer`` (about ``entry`` alone) makes of the row."""
    if answer.kind == client.CONFIRMED:
        receipt_id = answer.data.get("id") if isinstance(answer.data.get("id"), int) else None
        amount = answer.data.get("amount") if entry.procedure != CREATE_RECEIPT else None
        return Outcome(
            entry.token,
            "done",
            200,
            receipt_id=receipt_id,
            assigned_short_code=answer.data.get("short_code"),
            amount=amount if isinstance(amount, int) else None,
        )
    if answer.kind == client.REFUSED:
        return Outcome(entry.token, "failed", answer.status, answer.message)
    wait = next_wait(entry.attempts + 1, answer.retry_after, rng)
    return Outcome(entry.token, "retry", answer.status, answer.message, wait=wait)
