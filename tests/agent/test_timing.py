"""Where a POS answer's time goes (receco_agent.timing, RECECO_AGENT_TIMINGS): one line per
sale, its phases in order, on the clock a POS can read too; nothing without the variable."""

import json
import time

import pytest
from receco_agent import timing
from receco_agent.outbox import Outbox, Outcome

from tests.agent.support import make_settings, post_json, run_agent_server, stop_agent_server
from tests.agent.test_server import SALE


@pytest.fixture
def offline_agent(tmp_path, closed_url):
    running = run_agent_server(make_settings(tmp_path / "home", closed_url), forwarder=False)
    yield running
    stop_agent_server(running)


# A commit to the queue, timed in three phases.
COMMIT = ["queue lock", "queue written", "queue committed"]
OFFLINE_PHASES = [
    "accepted",
    "thread",
    "body",
    "validated",
    "prepared",
    *COMMIT,
    "stored",
    # The service cannot be reached: the attempt is recorded (a commit of its own).
    "service",
    *COMMIT,
    "uploaded",
    "answered",
    "sent",
]


def _lines(path):
    # The line is written once the answer is sent: the POS may read the answer first.
    deadline = time.monotonic() + 10
    while not (path.exists() and path.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.01)
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_sale_while_the_service_is_unreachable_is_timed_phase_by_phase(offline_agent, tmp_path, monkeypatch):
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv("RECECO_AGENT_TIMINGS", str(path))
    before = time.monotonic()
    status, answer, _ = post_json(f"{offline_agent.url}/transactions", SALE)
    after = time.monotonic()
    assert status == 200
    [line] = _lines(path)
    assert (line["kind"], line["token"]) == ("pos", answer["receiptId"])
    assert [point[0] for point in line["points"]] == OFFLINE_PHASES
    moments = [point[1] for point in line["points"]]
    assert moments == sorted(moments)
    assert before <= moments[0]
    assert moments[-2] <= after  # answered before the POS had the answer; "sent" may come after it read it
    # The thread's CPU and run-queue nanoseconds, from the handler on (the accept is another thread's).
    assert line["points"][0][2:] == [None, None]
    assert all(isinstance(point[2], int) and isinstance(point[3], int) for point in line["points"][1:])


def test_a_sale_uploaded_at_once_marks_the_services_answer(agent_server, tmp_path, monkeypatch):
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv("RECECO_AGENT_TIMINGS", str(path))
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert status == 200
    assert "queued" not in answer
    [line] = _lines(path)
    names = [point[0] for point in line["points"]]
    # The sale's commit, the service's answer, then its record (a commit of its own).
    assert names[names.index("stored") :] == ["stored", "service", *COMMIT, "uploaded", "answered", "sent"]


def test_nothing_is_recorded_without_the_variable(offline_agent, tmp_path, monkeypatch):
    monkeypatch.delenv("RECECO_AGENT_TIMINGS", raising=False)
    monkeypatch.chdir(tmp_path)
    status, _, _ = post_json(f"{offline_agent.url}/transactions", SALE)
    assert status == 200
    assert not timing.enabled()
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]


def test_the_drain_records_its_spans(tmp_path, monkeypatch):
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv("RECECO_AGENT_TIMINGS", str(path))
    outbox = Outbox(tmp_path / "q.sqlite3")
    outbox.add("rcpt_a_000001", "ABCDEF", "{}")
    outbox.settle([Outcome("rcpt_a_000001", "done", 200, receipt_id=1)])
    [line] = _lines(path)
    assert (line["kind"], line["name"], line["rows"]) == ("drain", "settle", 1)
    assert (line["start"][0], line["end"][0]) == ("start", "end")
    assert line["start"][1] <= line["end"][1]


@pytest.mark.parametrize("marks", [[], ["a", "b"]])
def test_marks_outside_a_timed_request_are_ignored(tmp_path, monkeypatch, marks):
    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv("RECECO_AGENT_TIMINGS", str(path))
    for name in marks:
        timing.mark(name)
    timing.token("rcpt_x")
    timing.end()
    assert not path.exists()
