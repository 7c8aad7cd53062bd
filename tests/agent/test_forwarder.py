import contextlib
import json
import random
import sqlite3
import threading
import time

import pytest
from receco_agent.agent import QUEUE_UPLOAD_TIMEOUT, Agent
from receco_agent.forwarder import IDLE_SECONDS, Forwarder, batches
from receco_agent.outbox import Entry

from tests.agent.support import Reply, calls_of, error_envelope, make_settings, wait_until


@pytest.fixture
def agent(tmp_path, fake_service):
    agent = Agent(make_settings(tmp_path, fake_service.api_url))
    agent.forwarder = Forwarder(agent, QUEUE_UPLOAD_TIMEOUT, rng=random.Random(7))  # a jitter that repeats
    agent.pacer.heard(0, ())  # as the start-up probe of a service that states no rate limits
    yield agent
    agent.forwarder.stop(10)


def queue_more(agent, count):
    return queue(agent, count, first=1000)


def queue(agent, count, first=0):
    tokens = []
    for i in range(first, first + count):
        token = f"rcpt_test{i:04d}_abcdef"
        body = {
            "token": token,
            "short_code": f"CODE{i:02d}",
            "merchant_string_id": "test-shop",
            "total_amount": i,
        }
        agent.outbox.add(token, f"CODE{i:02d}", json.dumps(body))
        tokens.append(token)
    return tokens


def test_drains_oldest_first_and_confirms_each(agent, fake_service):
    tokens = queue(agent, 5)
    assert agent.forwarder.drain() == IDLE_SECONDS
    assert fake_service.tokens() == tokens
    assert all(agent.outbox.get(t).state == "done" for t in tokens)
    assert agent.online is True


def test_until_the_service_has_answered_once_a_request_carries_one_call(tmp_path, fake_service):
    agent = Agent(make_settings(tmp_path, fake_service.api_url))
    try:
        tokens = queue(agent, 5)
        agent.forwarder.drain()
    finally:
        agent.forwarder.stop(10)
    assert [len(calls_of(request)) for request in fake_service.requests] == [1, 4]
    assert fake_service.tokens() == tokens


def test_a_service_wide_failure_pauses_the_whole_queue_with_backoff(agent, fake_service):
    tokens = queue(agent, 3)
    fake_service.script.append(Reply(503, error_envelope(503, "SERVICE_UNAVAILABLE", "Service unavailable")))
    wait = agent.forwarder.drain()
    assert 0.5 <= wait <= 1.0
    assert fake_service.tokens() == tokens
    assert [agent.outbox.get(t).state for t in tokens] == ["pending"] * 3
    assert agent.online is False
    fake_service.script.append(Reply(503, error_envelope(503, "SERVICE_UNAVAILABLE", "Service unavailable")))
    assert 1.0 <= agent.forwarder.drain() <= 2.0
    assert agent.forwarder.failures == 2
    assert agent.forwarder.drain() == IDLE_SECONDS
    assert agent.forwarder.failures == 0
    assert fake_service.tokens() == tokens * 3
    # The rows did nothing wrong: they keep no failure of their own and travel together.
    assert [(agent.outbox.get(t).attempts, agent.outbox.get(t).alone) for t in tokens] == [(1, False)] * 3


def test_sales_travel_in_batches_of_at_most_fifty(agent, fake_service):
    tokens = queue(agent, 120)
    assert agent.forwarder.drain() == IDLE_SECONDS
    sizes = sorted(len(calls_of(request)) for request in fake_service.requests)
    assert sizes == [20, 50, 50]
    assert all(request["path"].endswith("?batch=1") for request in fake_service.requests)
    assert sorted(fake_service.tokens()) == tokens
    assert all(agent.outbox.get(t).state == "done" for t in tokens)


def test_batches_split_by_count_and_size_and_a_row_marked_alone_goes_alone():
    def entry(i, size=10, alone=False):
        return Entry(i, f"t{i}", "ABCDEF", "x" * size, "pending", 0, None, None, None, "", alone=alone)

    rows = [entry(0), entry(1), entry(2, alone=True), entry(3), entry(4, size=90), entry(5)]
    assert [[e.id for e in b] for b in batches(rows, calls=2, size=100)] == [[0, 1], [2], [3], [4], [5]]


def test_a_row_that_fails_waits_alone_while_the_rows_behind_it_flow(agent, fake_service):
    tokens = queue(agent, 30)
    bad = tokens[0]
    unavailable = Reply(500, error_envelope(500, "INTERNAL_SERVER_ERROR", "Internal server error"))
    fake_service.call = lambda body: unavailable if body["token"] == bad else None
    started = time.time()
    agent.forwarder.drain()
    assert [agent.outbox.get(t).state for t in tokens] == ["pending"] + ["done"] * 29
    row = agent.outbox.get(bad)
    assert (row.attempts, row.last_status, row.last_error) == (1, 500, "Internal server error")
    assert agent.forwarder.failures == 0
    # Its own back-off (at least half a second after a first failure): not due before then.
    assert agent.outbox.pending(now=started + 0.49) == []
    assert [e.token for e in agent.outbox.pending(now=started + 3600)] == [bad]


def test_a_batch_refused_as_a_whole_is_retried_one_row_a_request(agent, fake_service):
    tokens = queue(agent, 4)
    fake_service.script.append(
        Reply(413, error_envelope(413, "PAYLOAD_TOO_LARGE", "Request body is larger than the limit of 1024 bytes"))
    )
    agent.forwarder.drain()
    assert [(agent.outbox.get(t).state, agent.outbox.get(t).alone) for t in tokens] == [("pending", True)] * 4
    with contextlib.closing(sqlite3.connect(agent.outbox.path)) as conn, conn:  # due now
        conn.execute("UPDATE outbox SET next_attempt_at = 0")
    agent.forwarder.drain()
    assert [len(calls_of(request)) for request in fake_service.requests] == [4, 1, 1, 1, 1]
    assert all(agent.outbox.get(t).state == "done" for t in tokens)


def test_a_refusal_inside_a_batch_marks_that_sale_alone(agent, fake_service):
    tokens = queue(agent, 5)
    refused = Reply(404, error_envelope(404, "NOT_FOUND", "Merchant not found"))
    fake_service.call = lambda body: refused if body["token"] == tokens[2] else None
    agent.forwarder.drain()
    assert [agent.outbox.get(t).state for t in tokens] == ["done", "done", "failed", "done", "done"]
    assert len(fake_service.requests) == 1
    assert agent.outbox.get(tokens[2]).last_error == "Merchant not found"


def test_retry_after_is_honoured(agent, fake_service):
    queue(agent, 1)
    fake_service.script.append(
        Reply(
            429,
            error_envelope(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
            {"Retry-After": "7"},
        )
    )
    # Never before the 7 s asked for, and up to half of it more at random (tills turned
    # away together come back apart).
    assert 7.0 <= agent.forwarder.drain() <= 10.5
    assert agent.online is True  # throttled, but the service is there


def test_a_replay_of_an_already_created_receipt_confirms_it(agent, fake_service):
    [token] = queue(agent, 1)
    fake_service.receipts[token] = {"id": 41, "token": token, "short_code": "CODE00"}
    agent.forwarder.drain()
    assert agent.outbox.get(token).state == "done"
    assert len(fake_service.receipts) == 1


def test_a_token_being_uploaded_by_a_sale_is_skipped(agent, fake_service):
    tokens = queue(agent, 2)
    assert agent.claim(tokens[0])
    agent.forwarder.drain()
    assert fake_service.tokens() == tokens[1:]
    agent.release(tokens[0])
    agent.forwarder.drain()
    assert fake_service.tokens() == [tokens[1], tokens[0]]


def test_the_thread_drains_in_the_background(agent, fake_service):
    tokens = queue(agent, 4)
    agent.forwarder.start()
    wait_until(lambda: all(agent.outbox.get(t).state == "done" for t in tokens))
    assert fake_service.tokens() == tokens


def test_a_queued_sale_wakes_an_idle_thread(agent, fake_service):
    agent.forwarder.start()
    wait_until(lambda: agent.online is True)  # the start-up check is done, the thread idles
    [token] = queue(agent, 1)
    started = time.monotonic()
    agent.forwarder.notify_queued()
    wait_until(lambda: agent.outbox.get(token).state == "done", timeout=IDLE_SECONDS)
    assert time.monotonic() - started < IDLE_SECONDS / 2


def test_stop_finishes_the_upload_in_flight(agent, fake_service):
    [token] = queue(agent, 1)
    arrived = threading.Event()

    def slow(request):
        if request["method"] == "GET":
            return Reply(405, error_envelope(405, "METHOD_NOT_SUPPORTED", "Method not supported"))
        arrived.set()
        [body] = calls_of(request)
        data = {"id": 1, "token": body["token"], "short_code": body["short_code"]}
        return Reply(200, [{"result": {"data": data}}], delay=1.0)

    fake_service.respond = slow
    before = set(threading.enumerate())
    agent.forwarder.start()
    [thread] = [t for t in threading.enumerate() if t not in before and t.name == "receco-forwarder"]
    assert arrived.wait(10)
    agent.forwarder.stop(10)
    assert not thread.is_alive()
    assert agent.outbox.get(token).state == "done"


def test_the_thread_survives_unexpected_errors(agent, fake_service, monkeypatch):
    tokens = queue(agent, 1)
    calls = []
    real_pending = agent.outbox.pending

    def flaky(limit=100):
        calls.append(limit)
        if len(calls) == 1:
            raise OSError("disk hiccup")
        return real_pending(limit)

    monkeypatch.setattr(agent.outbox, "pending", flaky)
    agent.forwarder.start()
    wait_until(lambda: agent.outbox.get(tokens[0]).state == "done")
    assert len(calls) >= 2


def test_a_request_that_failed_unexpectedly_gives_its_calls_back_to_the_pacer(tmp_path, fake_service, monkeypatch):
    from receco_agent import forwarder

    agent = Agent(make_settings(tmp_path, fake_service.api_url))  # limits not known yet: one call at a time
    tokens = queue(agent, 3)
    real = forwarder.client.call_batch

    def broken(*args, **kwargs):
        monkeypatch.setattr(forwarder.client, "call_batch", real)
        raise RuntimeError("a bug")

    monkeypatch.setattr(forwarder.client, "call_batch", broken)
    try:
        with pytest.raises(RuntimeError):
            agent.forwarder.drain()
        assert agent.forwarder.drain() == IDLE_SECONDS
    finally:
        agent.forwarder.stop(10)
    assert fake_service.tokens() == tokens


def test_with_a_backlog_at_start_the_first_upload_is_the_services_check(tmp_path, fake_service):
    # The check would spend a call of the key's rate limit; the backlog's first upload tells as much.
    agent = Agent(make_settings(tmp_path, fake_service.api_url))
    tokens = queue(agent, 3)
    agent.forwarder.start()
    try:
        wait_until(lambda: agent.outbox.summary()["pending"] == 0)
    finally:
        agent.forwarder.stop(10)
    assert [request["method"] for request in fake_service.requests] == ["POST", "POST"]
    assert fake_service.tokens() == tokens
    assert agent.online is True


def test_without_a_backlog_at_start_the_service_is_checked(tmp_path, fake_service):
    agent = Agent(make_settings(tmp_path, fake_service.api_url))
    agent.forwarder.start()
    try:
        wait_until(lambda: agent.online is not None)
    finally:
        agent.forwarder.stop(10)
    assert [request["path"].split("?")[0] for request in fake_service.requests] == ["/api/trpc/getReceipt"]
