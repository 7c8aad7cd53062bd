import json
import multiprocessing
import sqlite3
import time
from datetime import UTC, datetime, timedelta

import pytest
from receco_agent.outbox import _SCHEMA, _SCHEMA_2, DuplicateKey, Outbox


def add(outbox, token, code="ABCDEF"):
    outbox.add(
        token,
        code,
        json.dumps({"token": token, "short_code": code}),
        {"terminalId": "t1"},
    )


@pytest.fixture
def opened(monkeypatch):
    """Each SQLite connection opened during the test, in order (sqlite3.connect wrapped)."""
    found = []
    connect = sqlite3.connect

    def recording(*args, **kwargs):
        found.append(connect(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(sqlite3, "connect", recording)
    return found


def _synchronous(connections) -> list[int]:
    return [conn.execute("PRAGMA synchronous").fetchone()[0] for conn in connections]


def test_queue_file_uses_wal_and_full_sync(tmp_path, opened):
    outbox = Outbox(tmp_path / "q.sqlite3")
    conn = sqlite3.connect(tmp_path / "q.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    before = len(opened)
    add(outbox, "rcpt_a_000001")
    [writer] = opened[before:]
    assert writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert writer.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000


def test_a_sale_is_committed_with_full_sync_and_the_services_answers_with_normal(tmp_path, opened):
    outbox = Outbox(tmp_path / "q.sqlite3")
    before = len(opened)
    add(outbox, "rcpt_a_000001")
    sale = len(opened)
    outbox.mark_done("rcpt_a_000001", 7, "ABCDEF")
    # One open connection for each: the sale's commit waits for the disk, the answer's does not.
    assert (_synchronous(opened[before:sale]), _synchronous(opened[sale:])) == ([2], [1])  # FULL, NORMAL
    add(outbox, "rcpt_a_000002")
    outbox.mark_done("rcpt_a_000002", 8, "ABCDEG")
    assert len(opened) == sale + 1  # both kept open


def test_a_sales_commit_never_checkpoints_the_forwarder_does(tmp_path):
    path = tmp_path / "q.sqlite3"
    outbox = Outbox(path)
    size = path.stat().st_size
    for number in range(200):  # a connection per write checkpointed at each close
        add(outbox, f"rcpt_a_{number:06d}")
    assert path.stat().st_size == size  # every page still in the log only
    outbox.checkpoint()  # 200 commits: more than CHECKPOINT_COMMITS
    assert path.stat().st_size > size
    assert len(Outbox(path).pending(limit=500)) == 200


def test_a_checkpoint_waits_for_enough_commits_unless_forced(tmp_path):
    path = tmp_path / "q.sqlite3"
    outbox = Outbox(path)
    size = path.stat().st_size
    for number in range(20):  # pages enough to grow the file once checkpointed
        outbox.add(f"rcpt_a_{number:06d}", "ABCDEF", json.dumps({"note": "x" * 4000}))
    outbox.checkpoint()
    assert path.stat().st_size == size
    outbox.checkpoint(force=True)
    assert path.stat().st_size > size


class _NoCheckpoint(sqlite3.Connection):
    """A connection that fails to checkpoint, as one on a full disk does."""

    def execute(self, sql, *args):
        if "wal_checkpoint" in sql:
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


def test_a_checkpoint_that_fails_is_logged_and_the_queue_goes_on(tmp_path, caplog, monkeypatch):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *args, **kwargs: connect(*args, factory=_NoCheckpoint, **kwargs))
    outbox.close()  # its connections opened again from here: failing to checkpoint
    outbox.checkpoint(force=True)
    assert "Could not checkpoint the queue" in caplog.text
    assert [e.token for e in outbox.pending()] == ["rcpt_a_000001"]


def test_a_failed_commit_drops_the_writer_and_the_next_write_opens_another(tmp_path, opened):
    outbox = Outbox(tmp_path / "q.sqlite3")
    before = len(opened)
    add(outbox, "rcpt_a_000001")
    [writer] = opened[before:]
    with pytest.raises(sqlite3.IntegrityError):
        add(outbox, "rcpt_a_000001")  # fails inside the transaction: rolled back, writer kept
    assert opened[before:] == [writer]
    writer.close()  # a writer that fails whatever it is asked
    with pytest.raises(sqlite3.ProgrammingError):
        add(outbox, "rcpt_b_000002")
    add(outbox, "rcpt_b_000002")
    assert len(opened[before:]) == 2  # a new writer
    assert [e.token for e in outbox.pending()] == ["rcpt_a_000001", "rcpt_b_000002"]


def _add_in_child(path, token):
    Outbox(path).add(token, "CHILD1", json.dumps({"token": token}))
    # No cleanup, no flush: the process dies right after the commit returned.
    import os

    os._exit(0)


def test_a_committed_sale_survives_its_process(tmp_path):
    path = tmp_path / "q.sqlite3"
    Outbox(path)
    child = multiprocessing.get_context("spawn").Process(target=_add_in_child, args=(path, "rcpt_child_000001"))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    entry = Outbox(path).get("rcpt_child_000001")
    assert entry is not None
    assert (entry.state, entry.short_code, json.loads(entry.body)) == (
        "pending",
        "CHILD1",
        {"token": "rcpt_child_000001"},
    )


def test_pending_is_oldest_first_and_skips_done_and_failed(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    for token in ("rcpt_a_000001", "rcpt_b_000002", "rcpt_c_000003", "rcpt_d_000004"):
        add(outbox, token)
    outbox.mark_done("rcpt_b_000002", 7, "ABCDEF")
    outbox.mark_failed("rcpt_c_000003", 404, "Merchant not found")
    assert [e.token for e in outbox.pending()] == ["rcpt_a_000001", "rcpt_d_000004"]
    assert [e.token for e in outbox.pending(limit=1)] == ["rcpt_a_000001"]


def test_body_is_kept_byte_for_byte(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    body = '{"token":"rcpt_x_000001","total_amount":5,"items":[{"name":"Ẹ̀fọ́"}]}'
    outbox.add("rcpt_x_000001", "ABCDEF", body)
    assert outbox.pending()[0].body == body


def test_token_is_unique(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    try:
        add(outbox, "rcpt_a_000001")
    except sqlite3.IntegrityError:
        pass
    else:
        raise AssertionError("duplicate token accepted")
    assert len(outbox.pending()) == 1


def test_summary_counts_errors_successes_and_short_code_changes(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    assert outbox.summary() == Outbox.empty_summary()
    for token in ("rcpt_a_000001", "rcpt_b_000002", "rcpt_c_000003"):
        add(outbox, token)
    outbox.record_attempt("rcpt_a_000001", None, "cannot reach x")
    outbox.mark_done("rcpt_b_000002", 9, "ZZZZZZ")
    outbox.mark_failed("rcpt_c_000003", 404, "Merchant not found")
    summary = outbox.summary()
    assert (summary["pending"], summary["failed"], summary["done"]) == (1, 1, 1)
    assert summary["last_error"]["message"] == "Merchant not found"
    assert summary["last_error"]["status"] == 404
    assert summary["last_success"] is not None
    assert summary["failed_transactions"] == [
        {
            "token": "rcpt_c_000003",
            "short_code": "ABCDEF",
            "status": 404,
            "error": "Merchant not found",
            "at": summary["failed_transactions"][0]["at"],
        }
    ]
    assert [(c["token"], c["requested"], c["assigned"]) for c in summary["short_code_changes"]] == [
        ("rcpt_b_000002", "ABCDEF", "ZZZZZZ")
    ]
    entry = outbox.get("rcpt_a_000001")
    assert (entry.attempts, entry.last_error) == (1, "cannot reach x")


def test_clear_failed_removes_only_failed(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    add(outbox, "rcpt_b_000002")
    outbox.mark_failed("rcpt_b_000002", 400, "bad")
    assert outbox.clear_failed() == 1
    assert outbox.clear_failed() == 0
    assert outbox.get("rcpt_b_000002") is None
    assert outbox.get("rcpt_a_000001").state == "pending"


def test_retry_failed_puts_them_back(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    outbox.mark_failed("rcpt_a_000001", 401, "Invalid API key")
    assert outbox.retry_failed() == 1
    assert [e.token for e in outbox.pending()] == ["rcpt_a_000001"]


def test_discard_removes_only_a_pending_row(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    add(outbox, "rcpt_b_000002")
    outbox.mark_done("rcpt_b_000002", 1, "ABCDEF")
    outbox.discard("rcpt_a_000001")
    outbox.discard("rcpt_b_000002")
    assert outbox.get("rcpt_a_000001") is None
    assert outbox.get("rcpt_b_000002").state == "done"


def test_prune_removes_old_confirmed_rows_only(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    add(outbox, "rcpt_b_000002")
    outbox.mark_done("rcpt_a_000001", 1, "ABCDEF")
    assert outbox.prune() == 0
    assert outbox.prune(now=datetime.now(UTC) + timedelta(days=8)) == 1
    assert outbox.get("rcpt_a_000001") is None
    assert outbox.get("rcpt_b_000002").state == "pending"


def test_reopening_keeps_the_data(tmp_path):
    add(Outbox(tmp_path / "q.sqlite3"), "rcpt_a_000001")
    again = Outbox(tmp_path / "q.sqlite3")
    assert [e.token for e in again.pending()] == ["rcpt_a_000001"]


def test_a_damaged_queue_file_is_kept_aside_and_a_fresh_queue_starts(tmp_path, caplog):
    path = tmp_path / "queue.sqlite3"
    first = Outbox(path)
    add(first, "rcpt_a_000001")
    first.close()  # the agent that wrote it stopped (its last connection checkpointed the log)
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    outbox = Outbox(path)
    [kept] = tmp_path.glob("queue.sqlite3.damaged-*")
    assert kept.stat().st_size == 1000
    assert outbox.pending() == []
    damaged = outbox.summary()["damaged_queue"]
    assert damaged["kept_as"] == str(kept)
    assert f"The queue file {path} is damaged" in caplog.text


def test_a_file_that_is_not_a_database_is_kept_aside(tmp_path):
    path = tmp_path / "queue.sqlite3"
    path.write_bytes(b"this is not a database at all" * 100)
    outbox = Outbox(path)
    add(outbox, "rcpt_a_000001")
    assert [e.token for e in outbox.pending()] == ["rcpt_a_000001"]
    assert outbox.summary()["damaged_queue"]["error"] == "file is not a database"


def test_a_queue_of_the_first_version_is_upgraded_in_place(tmp_path):
    path = tmp_path / "queue.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA)
    conn.execute("PRAGMA user_version=1")
    conn.execute(
        "INSERT INTO outbox (token, short_code, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        ("rcpt_old_000001", "ABCDEF", "{}", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z"),
    )
    conn.commit()
    conn.close()
    [entry] = Outbox(path).pending()
    assert (entry.token, entry.procedure, entry.alone) == ("rcpt_old_000001", "createReceiptFromPOS", False)


def test_a_queue_of_the_second_version_gets_keys_per_kind_and_refunds_after_their_sale(tmp_path):
    path = tmp_path / "queue.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA + _SCHEMA_2)
    conn.execute("PRAGMA user_version=2")
    rows = [
        ("rcpt_sale_000001", "ABCDEF", "createReceiptFromPOS", "k-1", None),
        ("rcpt_refund_00001", "", "refundReceipt", "k-2", "abcdef"),  # a refund by short code, as version 2 kept it
    ]
    for token, code, procedure, key, after in rows:
        conn.execute(
            "INSERT INTO outbox (token, short_code, body, created_at, updated_at, procedure, idempotency_key,"
            " after_token) VALUES (?, ?, '{}', '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z', ?, ?, ?)",
            (token, code, procedure, key, after),
        )
    conn.commit()
    conn.close()
    outbox = Outbox(path)
    assert [e.token for e in outbox.pending()] == ["rcpt_sale_000001"]  # the refund waits for its sale now
    assert outbox.by_key("k-1").request_digest is None  # a retry of it is not compared
    outbox.add("rcpt_refund_00002", "", "{}", idempotency_key="k-1", procedure="refundReceipt")
    with pytest.raises(DuplicateKey):
        outbox.add("rcpt_refund_00003", "", "{}", idempotency_key="k-2", procedure="refundReceipt")


def test_an_error_followed_by_an_upload_is_no_longer_shown(tmp_path):
    outbox = Outbox(tmp_path / "q.sqlite3")
    add(outbox, "rcpt_a_000001")
    outbox.record_attempt(None, None, "cannot reach the service")
    assert outbox.summary()["last_error"]["message"] == "cannot reach the service"
    time.sleep(0.002)  # the next confirmation is later than the error
    outbox.mark_done("rcpt_a_000001", 1, "ABCDEF")
    assert outbox.summary()["last_error"] is None
