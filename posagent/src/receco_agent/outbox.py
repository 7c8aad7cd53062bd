"""The durable local queue of sales waiting for the service (SQLite, WAL).

Every accepted sale is committed here before the POS gets an answer, and stays until the
service confirmed it (state ``done``) or refused it for good (state ``failed``). That is
at-least-once delivery; the token, which the service treats as an idempotency key, makes
it exactly-once receipts. Each write is one short transaction, so the HTTP threads, the
forwarder and other processes (``status``, ``clear-queue``) can share the file.

The connections stay open: one for the writes the POS waits for (``synchronous=FULL``),
one for the records of the service's answers (``NORMAL``), and a few for reads. Opening
and closing one per write cost a sale a checkpoint of the whole log, with a sync of the
database file, each time the last connection closed (6.8 ms of an idle agent's answer,
11.6 ms at p50 while 50 agents drained). Checkpoints are the forwarder's, off the POS's
path (checkpoint())."""

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from receco_agent import timing
from receco_agent.transactions import iso_utc

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
CREATE_RECEIPT = "createReceiptFromPOS"
SHORT_CODE_LENGTH = 6
BUSY_TIMEOUT_MS = 10_000
# A commit never checkpoints by itself below this many log pages (about 40 MB): the
# forwarder does it (checkpoint()), so a sale never waits for one; this bounds the log if
# the forwarder cannot.
AUTOCHECKPOINT_PAGES = 10_000
# Commits after which the forwarder checkpoints (SQLite's own default is 1,000 pages).
CHECKPOINT_COMMITS = 100
IDLE_READERS = 4
# Confirmed rows are kept a while so 'status' can show recent short-code changes.
DONE_RETENTION = timedelta(days=7)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    short_code TEXT NOT NULL,
    body TEXT NOT NULL,
    local TEXT NOT NULL DEFAULT '{}',
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status INTEGER,
    last_error TEXT,
    assigned_short_code TEXT,
    receipt_id INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    confirmed_at TEXT
);
-- serves the forwarder's "pending rows, oldest first" and the per-state counts
CREATE INDEX IF NOT EXISTS outbox_state_id ON outbox (state, id);
CREATE TABLE IF NOT EXISTS agent_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Version 2: the procedure each row calls, a back-off of its own (so one bad row never holds
# the rows behind it), whether it must travel alone, and the POS's idempotency key.
_SCHEMA_2 = """
ALTER TABLE outbox ADD COLUMN procedure TEXT NOT NULL DEFAULT 'createReceiptFromPOS';
ALTER TABLE outbox ADD COLUMN next_attempt_at REAL NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN alone INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN idempotency_key TEXT;
ALTER TABLE outbox ADD COLUMN after_token TEXT;
-- serves the look-up of a POS's retry by its Idempotency-Key
CREATE UNIQUE INDEX IF NOT EXISTS outbox_idempotency_key ON outbox (idempotency_key);
"""
# Version 3: an Idempotency-Key is a sale's or a refund's (a refund sent with a sale's key is
# a refund of its own), and a retry must send the request it repeats: a digest of it is kept.
# The amount the service refunded, to answer a refund's retry. A refund waits for its sale by
# the sale's token, which version 2 did not look up for a refund by short code.
_SCHEMA_3 = """
ALTER TABLE outbox ADD COLUMN request_digest TEXT;
ALTER TABLE outbox ADD COLUMN amount INTEGER;
DROP INDEX IF EXISTS outbox_idempotency_key;
CREATE UNIQUE INDEX outbox_procedure_idempotency_key ON outbox (procedure, idempotency_key);
UPDATE outbox SET after_token = COALESCE((
    SELECT sale.token FROM outbox AS sale WHERE sale.procedure = 'createReceiptFromPOS'
    AND upper(outbox.after_token) IN (sale.short_code, sale.assigned_short_code) ORDER BY sale.id DESC LIMIT 1
), after_token) WHERE length(after_token) = 6;
"""


class DuplicateKey(Exception):
    """A sale (or a refund) with this idempotency key is already in the queue."""


@dataclass(frozen=True)
class Outcome:
    """What became of one row in a batch: ``done``, ``failed`` or ``retry`` after ``wait`` seconds."""

    token: str
    state: str
    status: int | None = None
    error: str | None = None
    receipt_id: int | None = None
    assigned_short_code: str | None = None
    wait: float = 0.0
    alone: bool = False  # next time in a request of its own (its batch as a whole was refused)
    amount: int | None = None  # of a refund, as the service made it


@dataclass(frozen=True)
class Entry:
    """One queued sale: the exact body to send, so every retry is byte-identical."""

    id: int
    token: str
    short_code: str
    body: str
    state: str
    attempts: int
    last_status: int | None
    last_error: str | None
    assigned_short_code: str | None
    created_at: str
    procedure: str = CREATE_RECEIPT
    alone: bool = False
    request_digest: str | None = None  # of the POS's request, to tell a retry from another request
    amount: int | None = None  # of a refund, once the service made it


def _now() -> str:
    return iso_utc(datetime.now(UTC))


class Outbox:
    """The queue file at ``path``; creates it (and its schema) on first use."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._writers: dict[bool, sqlite3.Connection] = {}  # by durable; used under _write_lock
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._commits = 0  # since the last checkpoint
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            self._open()

    def _open(self) -> None:
        with self._connect() as conn:
            # WAL lets readers ('status') run while the agent writes; it persists in the file.
            conn.execute("PRAGMA journal_mode=WAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version < 1:
                conn.executescript(_SCHEMA)
            if version < 2:
                conn.executescript(_SCHEMA_2)
            if version < 3:
                conn.executescript(_SCHEMA_3)
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            # A truncated or overwritten file often opens fine and fails on the first read
            # of a damaged page; find out now rather than in the middle of a sale.
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")

    def close(self) -> None:
        """Close the open connections (the last one to close checkpoints the log)."""
        with self._write_lock:
            writers, self._writers = list(self._writers.values()), {}
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in readers + writers:
            conn.close()

    def checkpoint(self, force: bool = False) -> None:
        """Copy the log into the database file when CHECKPOINT_COMMITS commits (any, with
        ``force``) were made since the last time, without waiting for readers or writers
        (PASSIVE): called by the forwarder, so a sale's commit never does it."""
        if not self._commits or (self._commits < CHECKPOINT_COMMITS and not force):
            return
        self._commits = 0
        try:
            with self._reading() as conn:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            # The log only grows until the next one: never a reason to stop uploading.
            log.warning("Could not checkpoint the queue %s: %s", self.path, exc)

    def _set_aside(self, error: Exception) -> None:
        """Move a damaged queue file (and its WAL) aside under a dated name, so a fresh one can start."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        kept = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                source.replace(f"{kept}{suffix}")
        log.critical(
            "The queue file %s is damaged (%s): it was kept as %s and a fresh queue started. "
            "Sales that were waiting in it are NOT uploaded; keep that file for support.",
            self.path,
            error,
            kept,
        )
        self._open()
        with self._write() as conn:
            _set_state(conn, "damaged_queue", json.dumps({"at": _now(), "kept_as": str(kept), "error": str(error)}))

    def _open_connection(self, durable: bool = True) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # FULL: a commit survives power loss, since the POS is told "done" right after
            # it. NORMAL (in WAL mode: no sync at commit, the file stays sound) for what may
            # be lost: the service's answers, which a re-upload gets again (see _write).
            conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            conn.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
        except BaseException:
            conn.close()  # e.g. a damaged file: it is set aside with nothing left open on it
            raise
        return conn

    @contextmanager
    def _connect(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection of its own, closed at the end (set-up, and tests)."""
        conn = self._open_connection(durable)
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """One of the open connections for reads (a new one when all are in use)."""
        with self._readers_lock:
            conn = self._readers.pop() if self._readers else None
        if conn is None:
            conn = self._open_connection()
        try:
            yield conn
        except BaseException:
            conn.close()  # e.g. a read left unfinished: not given to the next reader
            raise
        with self._readers_lock:
            if len(self._readers) < IDLE_READERS:
                self._readers.append(conn)
                return
        conn.close()

    @contextmanager
    def _write(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction. ``durable=False`` for records of the service's answers: one
        lost to a power cut leaves its row pending, so it is sent again and the service
        answers the same (the token is its idempotency key). Such a commit does not wait
        for the disk, so a sale the POS is waiting for never queues behind that wait (on
        an old till's disk, tens of milliseconds)."""
        # Writers of this process take turns here rather than in SQLite's busy handler,
        # which sleeps and retries: under a burst of sales some waited past the timeout.
        with self._write_lock:
            timing.mark("queue lock")
            conn = self._writers.get(durable)
            if conn is None:
                conn = self._writers[durable] = self._open_connection(durable)
            with self._dropped_on_error(durable, conn):
                conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with self._dropped_on_error(durable, conn):
                    conn.execute("ROLLBACK")
                raise
            timing.mark("queue written")
            with self._dropped_on_error(durable, conn):
                conn.execute("COMMIT")
            self._commits += 1
            timing.mark("queue committed")

    @contextmanager
    def _dropped_on_error(self, durable: bool, conn: sqlite3.Connection) -> Iterator[None]:
        """Close the writer ``conn`` when the block fails (a full disk, a damaged file): the
        next write opens a new one, and closing it rolls back whatever was left open."""
        try:
            yield
        except BaseException:
            if self._writers.get(durable) is conn:
                del self._writers[durable]
            conn.close()
            raise

    def add(
        self,
        token: str,
        short_code: str,
        body: str,
        local: dict | None = None,
        idempotency_key: str | None = None,
        procedure: str = CREATE_RECEIPT,
        after_token: str | None = None,
        request_digest: str | None = None,
    ) -> None:
        """Commit a new pending sale (``body``: its JSON service input); returns once durable.

        ``after_token``: the row is sent only once the row of that token is not pending.
        Raises DuplicateKey when a row of ``procedure`` with ``idempotency_key`` exists already.
        """
        now = _now()
        try:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO outbox (token, short_code, body, local, created_at, updated_at, idempotency_key,"
                    " procedure, after_token, request_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        token,
                        short_code,
                        body,
                        json.dumps(local or {}),
                        now,
                        now,
                        idempotency_key,
                        procedure,
                        after_token,
                        request_digest,
                    ),
                )
        except sqlite3.IntegrityError:
            if idempotency_key is not None and self.by_key(idempotency_key, procedure) is not None:
                raise DuplicateKey(idempotency_key) from None
            raise

    def by_key(self, idempotency_key: str, procedure: str = CREATE_RECEIPT) -> Entry | None:
        """Return the row of ``procedure`` the POS sent with ``idempotency_key``, or None."""
        with self._reading() as conn:
            row = conn.execute(
                "SELECT * FROM outbox WHERE procedure = ? AND idempotency_key = ?", (procedure, idempotency_key)
            ).fetchone()
        return _entry(row) if row else None

    def find_sale(self, reference: str) -> Entry | None:
        """Return the sale whose token, or short code (as printed or as the service gave it,
        in any case), is ``reference``; the latest when two share a code; None if none is here."""
        if len(reference) != SHORT_CODE_LENGTH:  # a token: 8 to 64 characters
            entry = self.get(reference)
            return entry if entry is not None and entry.procedure == CREATE_RECEIPT else None
        code = reference.upper()
        with self._reading() as conn:
            row = conn.execute(
                "SELECT * FROM outbox WHERE procedure = ? AND ? IN (short_code, assigned_short_code)"
                " ORDER BY id DESC LIMIT 1",
                (CREATE_RECEIPT, code),
            ).fetchone()
        return _entry(row) if row else None

    def pending(self, limit: int = 100, now: float | None = None) -> list[Entry]:
        """Return up to ``limit`` pending sales due for a try at ``now`` (epoch seconds), oldest first.

        A row to be sent after another (a refund of a queued sale) waits while that one is pending.
        """
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT * FROM outbox WHERE state = 'pending' AND next_attempt_at <= ? AND (after_token IS NULL"
                " OR after_token NOT IN (SELECT token FROM outbox WHERE state = 'pending')) ORDER BY id LIMIT ?",
                (time.time() if now is None else now, limit),
            ).fetchall()
        return [_entry(row) for row in rows]

    def next_due(self) -> float | None:
        """Return when (epoch seconds) the next pending row is due, None when none is pending."""
        with self._reading() as conn:
            return conn.execute("SELECT MIN(next_attempt_at) FROM outbox WHERE state = 'pending'").fetchone()[0]

    def settle(self, outcomes: list["Outcome"]) -> None:
        """Record the outcomes of one batch in one transaction, not waiting for the disk (see _write).

        The confirmations go in one statement, prepared before the write lock is taken: a
        sale waits for this transaction when it comes in the middle of it.
        """
        now, at = _now(), time.time()
        done = [
            (o.receipt_id, o.assigned_short_code, o.amount, now, now, o.token) for o in outcomes if o.state == "done"
        ]
        others = [outcome for outcome in outcomes if outcome.state != "done"]
        with timing.span("settle", rows=len(outcomes)), self._write(durable=False) as conn:
            if done:
                conn.executemany(
                    "UPDATE outbox SET state = 'done', attempts = attempts + 1, last_status = 200,"
                    " last_error = NULL, receipt_id = ?, assigned_short_code = ?, amount = ?, confirmed_at = ?,"
                    " updated_at = ? WHERE token = ? AND state = 'pending'",
                    done,
                )
                _set_state(conn, "last_success", now)
            for outcome in others:
                if outcome.state == "failed":
                    conn.execute(
                        "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_status = ?,"
                        " last_error = ?, updated_at = ? WHERE token = ? AND state = 'pending'",
                        (outcome.status, outcome.error, now, outcome.token),
                    )
                    _fail_followers(conn, outcome.token, outcome.status, outcome.error, now)
                else:
                    conn.execute(
                        "UPDATE outbox SET attempts = attempts + 1, last_status = ?, last_error = ?, updated_at = ?,"
                        " next_attempt_at = ?, alone = ? WHERE token = ? AND state = 'pending'",
                        (outcome.status, outcome.error, now, at + outcome.wait, int(outcome.alone), outcome.token),
                    )
            if others:  # the batch's last one, as each would have replaced the one before
                last = others[-1]
                error = {"at": now, "token": last.token, "status": last.status, "message": last.error}
                _set_state(conn, "last_error", json.dumps(error))

    def get(self, token: str) -> Entry | None:
        """Return the sale with ``token``, or None."""
        with self._reading() as conn:
            row = conn.execute("SELECT * FROM outbox WHERE token = ?", (token,)).fetchone()
        return _entry(row) if row else None

    def mark_done(
        self, token: str, receipt_id: int | None, assigned_short_code: str | None, amount: int | None = None
    ) -> None:
        """Record the service's confirmation of ``token`` (``amount``: a refund's), not
        waiting for the disk: one lost to a power cut leaves the row pending, and its
        re-upload gets the same answer (see _write)."""
        now = _now()
        with self._write(durable=False) as conn:
            conn.execute(
                "UPDATE outbox SET state = 'done', attempts = attempts + 1, last_status = 200,"
                " last_error = NULL, receipt_id = ?, assigned_short_code = ?, amount = ?, confirmed_at = ?,"
                " updated_at = ? WHERE token = ?",
                (receipt_id, assigned_short_code, amount, now, now, token),
            )
            _set_state(conn, "last_success", now)

    def mark_failed(self, token: str, status: int | None, error: str) -> None:
        """Record that the service refused ``token`` for good; it stays until clear_failed
        (not waiting for the disk: if lost, the re-upload is refused again)."""
        now = _now()
        with self._write(durable=False) as conn:
            conn.execute(
                "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_status = ?,"
                " last_error = ?, updated_at = ? WHERE token = ?",
                (status, error, now, token),
            )
            _fail_followers(conn, token, status, error, now)
            _set_state(
                conn,
                "last_error",
                json.dumps({"at": now, "token": token, "status": status, "message": error}),
            )

    def record_attempt(self, token: str | None, status: int | None, error: str) -> None:
        """Record a failed attempt that will be retried (or, without a token, a failed contact);
        not waiting for the disk, as it only counts and describes."""
        now = _now()
        with self._write(durable=False) as conn:
            if token:
                conn.execute(
                    "UPDATE outbox SET attempts = attempts + 1, last_status = ?, last_error = ?,"
                    " updated_at = ? WHERE token = ? AND state = 'pending'",
                    (status, error, now, token),
                )
            _set_state(
                conn,
                "last_error",
                json.dumps({"at": now, "token": token, "status": status, "message": error}),
            )

    def discard(self, token: str) -> None:
        """Remove a sale the POS was told had failed, so it is never uploaded."""
        with self._write() as conn:
            conn.execute("DELETE FROM outbox WHERE token = ? AND state = 'pending'", (token,))

    def clear_failed(self) -> int:
        """Remove all failed sales; return how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM outbox WHERE state = 'failed'").rowcount

    def retry_failed(self) -> int:
        """Put all failed sales back in the queue (e.g. after fixing the API key); return how many."""
        with self._write() as conn:
            return conn.execute(
                "UPDATE outbox SET state = 'pending', next_attempt_at = 0, alone = 0, updated_at = ?"
                " WHERE state = 'failed'",
                (_now(),),
            ).rowcount

    def prune(self, now: datetime | None = None) -> int:
        """Delete confirmed sales older than the retention period; return how many."""
        cutoff = iso_utc((now or datetime.now(UTC)) - DONE_RETENTION)
        with self._write() as conn:
            return conn.execute(
                "DELETE FROM outbox WHERE state = 'done' AND confirmed_at < ?",
                (cutoff,),
            ).rowcount

    @staticmethod
    def empty_summary() -> dict:
        """Return summary() of a queue that does not exist yet."""
        return {
            "pending": 0,
            "failed": 0,
            "done": 0,
            "oldest_pending": None,
            "last_error": None,
            "last_success": None,
            "failed_transactions": [],
            "short_code_changes": [],
            "damaged_queue": None,
        }

    def summary(self) -> dict:
        """Return counts, last error, last success, failed sales and recent short-code changes."""
        with self._reading() as conn:
            counts = dict(conn.execute("SELECT state, COUNT(*) FROM outbox GROUP BY state").fetchall())
            state = dict(conn.execute("SELECT key, value FROM agent_state").fetchall())
            failed = conn.execute(
                "SELECT token, short_code, last_status, last_error, updated_at FROM outbox"
                " WHERE state = 'failed' ORDER BY id LIMIT 50"
            ).fetchall()
            changed = conn.execute(
                "SELECT token, short_code, assigned_short_code, confirmed_at FROM outbox"
                " WHERE state = 'done' AND assigned_short_code IS NOT NULL AND short_code != ''"
                " AND assigned_short_code != short_code ORDER BY id DESC LIMIT 20"
            ).fetchall()
            oldest = conn.execute("SELECT MIN(created_at) FROM outbox WHERE state = 'pending'").fetchone()[0]
        return {
            "pending": counts.get("pending", 0),
            "failed": counts.get("failed", 0),
            "done": counts.get("done", 0),
            "oldest_pending": oldest,
            "last_error": _unresolved(state.get("last_error"), state.get("last_success")),
            "last_success": state.get("last_success"),
            "damaged_queue": json.loads(state["damaged_queue"]) if "damaged_queue" in state else None,
            "failed_transactions": [
                {
                    "token": r[0],
                    "short_code": r[1],
                    "status": r[2],
                    "error": r[3],
                    "at": r[4],
                }
                for r in failed
            ],
            "short_code_changes": [{"token": r[0], "requested": r[1], "assigned": r[2], "at": r[3]} for r in changed],
        }


def _unresolved(last_error: str | None, last_success: str | None) -> dict | None:
    # An error followed by a confirmed upload is resolved: status no longer shows it
    # (a sale refused for good stays listed among the failed ones).
    error = json.loads(last_error) if last_error else None
    if error is None or (last_success is not None and last_success > error["at"]):
        return None
    return error


def _fail_followers(conn: sqlite3.Connection, token: str, status: int | None, error: str | None, now: str) -> None:
    # The refunds queued after a sale the service refused cannot succeed before it does:
    # they fail with it, and 'retry-failed' queues them again with it, still after it.
    conn.execute(
        "UPDATE outbox SET state = 'failed', last_status = ?, last_error = ?, updated_at = ?"
        " WHERE after_token = ? AND state = 'pending'",
        (status, f"Its sale {token} was refused by the service: {error}", now, token),
    )


def _set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO agent_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _entry(row: sqlite3.Row) -> Entry:
    return Entry(
        id=row["id"],
        token=row["token"],
        short_code=row["short_code"],
        body=row["body"],
        state=row["state"],
        attempts=row["attempts"],
        last_status=row["last_status"],
        last_error=row["last_error"],
        assigned_short_code=row["assigned_short_code"],
        created_at=row["created_at"],
        procedure=row["procedure"],
        alone=bool(row["alone"]),
        request_digest=row["request_digest"],
        amount=row["amount"],
    )
