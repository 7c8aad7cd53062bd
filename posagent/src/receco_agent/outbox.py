"""The durable local queue of sales waiting for the service (SQLite, WAL).

Every accepted sale is committed here before the POS gets an answer, and stays until the
service confirmed it (state ``done``) or refused it for good (state ``failed``). That is
at-least-once delivery; the token, which the service treats as an idempotency key, makes
it exactly-once receipts. Each write is one short transaction on its own connection, so the
HTTP threads, the forwarder and other processes (``status``, ``clear-queue``) can share
the file."""

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from receco_agent.transactions import iso_utc

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000
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


def _now() -> str:
    return iso_utc(datetime.now(UTC))


class Outbox:
    """The queue file at ``path``; creates it (and its schema) on first use."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            # WAL lets readers ('status') run while the agent writes; it persists in the file.
            conn.execute("PRAGMA journal_mode=WAL")
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # FULL: a commit survives power loss, since the POS is told "done" right after it.
            conn.execute("PRAGMA synchronous=FULL")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def add(self, token: str, short_code: str, body: str, local: dict | None = None) -> None:
        """Commit a new pending sale (``body``: its JSON service input); returns once durable."""
        now = _now()
        with self._write() as conn:
            conn.execute(
                "INSERT INTO outbox (token, short_code, body, local, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (token, short_code, body, json.dumps(local or {}), now, now),
            )

    def pending(self, limit: int = 100) -> list[Entry]:
        """Return up to ``limit`` pending sales, oldest first."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT * FROM outbox WHERE state = 'pending' ORDER BY id LIMIT ?",
                (limit,),
            ).fetchall()
        return [_entry(row) for row in rows]

    def get(self, token: str) -> Entry | None:
        """Return the sale with ``token``, or None."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM outbox WHERE token = ?", (token,)).fetchone()
        return _entry(row) if row else None

    def mark_done(self, token: str, receipt_id: int | None, assigned_short_code: str | None) -> None:
        """Record the service's confirmation of ``token``."""
        now = _now()
        with self._write() as conn:
            conn.execute(
                "UPDATE outbox SET state = 'done', attempts = attempts + 1, last_status = 200,"
                " last_error = NULL, receipt_id = ?, assigned_short_code = ?, confirmed_at = ?,"
                " updated_at = ? WHERE token = ?",
                (receipt_id, assigned_short_code, now, now, token),
            )
            _set_state(conn, "last_success", now)

    def mark_failed(self, token: str, status: int | None, error: str) -> None:
        """Record that the service refused ``token`` for good; it stays until clear_failed."""
        now = _now()
        with self._write() as conn:
            conn.execute(
                "UPDATE outbox SET state = 'failed', attempts = attempts + 1, last_status = ?,"
                " last_error = ?, updated_at = ? WHERE token = ?",
                (status, error, now, token),
            )
            _set_state(
                conn,
                "last_error",
                json.dumps({"at": now, "token": token, "status": status, "message": error}),
            )

    def record_attempt(self, token: str | None, status: int | None, error: str) -> None:
        """Record a failed attempt that will be retried (or, without a token, a failed contact)."""
        now = _now()
        with self._write() as conn:
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
                "UPDATE outbox SET state = 'pending', updated_at = ? WHERE state = 'failed'",
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
        }

    def summary(self) -> dict:
        """Return counts, last error, last success, failed sales and recent short-code changes."""
        with self._connect() as conn:
            counts = dict(conn.execute("SELECT state, COUNT(*) FROM outbox GROUP BY state").fetchall())
            state = dict(conn.execute("SELECT key, value FROM agent_state").fetchall())
            failed = conn.execute(
                "SELECT token, short_code, last_status, last_error, updated_at FROM outbox"
                " WHERE state = 'failed' ORDER BY id LIMIT 50"
            ).fetchall()
            changed = conn.execute(
                "SELECT token, short_code, assigned_short_code, confirmed_at FROM outbox"
                " WHERE state = 'done' AND assigned_short_code IS NOT NULL"
                " AND assigned_short_code != short_code ORDER BY id DESC LIMIT 20"
            ).fetchall()
            oldest = conn.execute("SELECT MIN(created_at) FROM outbox WHERE state = 'pending'").fetchone()[0]
        return {
            "pending": counts.get("pending", 0),
            "failed": counts.get("failed", 0),
            "done": counts.get("done", 0),
            "oldest_pending": oldest,
            "last_error": json.loads(state["last_error"]) if "last_error" in state else None,
            "last_success": state.get("last_success"),
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
    )
