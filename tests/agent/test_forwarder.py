import json
import random
import threading
import time

import pytest
from receco_agent.agent import Agent
from receco_agent.forwarder import IDLE_SECONDS

from tests.agent.support import Reply, error_envelope, make_settings, wait_until


@pytest.fixture
def agent(tmp_path, fake_service):
    agent = Agent(make_settings(tmp_path, fake_service.api_url))
    agent.forwarder._rng = random.Random(7)
    yield agent
    agent.forwarder.stop(10)


def queue(agent, count):
    tokens = []
    for i in range(count):
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


def test_a_transient_failure_pauses_the_queue_with_backoff(agent, fake_service):
    tokens = queue(agent, 3)
    fake_service.script.append(Reply(503, error_envelope(503, "INTERNAL_SERVER_ERROR", "Service unavailable")))
    wait = agent.forwarder.drain()
    assert 0.5 <= wait <= 1.0
    assert fake_service.tokens() == tokens[:1]
    assert agent.outbox.get(tokens[0]).state == "pending"
    assert agent.online is False
    fake_service.script.append(Reply(503, error_envelope(503, "INTERNAL_SERVER_ERROR", "Service unavailable")))
    assert 1.0 <= agent.forwarder.drain() <= 2.0
    assert agent.forwarder.failures == 2
    assert agent.forwarder.drain() == IDLE_SECONDS
    assert agent.forwarder.failures == 0
    assert fake_service.tokens() == [tokens[0], tokens[0], *tokens]
    assert agent.outbox.get(tokens[0]).attempts == 3


def test_retry_after_is_honoured(agent, fake_service):
    queue(agent, 1)
    fake_service.script.append(
        Reply(
            429,
            error_envelope(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
            {"Retry-After": "7"},
        )
    )
    assert agent.forwarder.drain() == 7.0
    assert agent.online is True  # throttled, but the service is there


def test_a_refused_sale_is_marked_failed_and_the_queue_goes_on(agent, fake_service):
    tokens = queue(agent, 3)
    fake_service.script.append(Reply(400, error_envelope(400, "INVALID_INPUT", "items: must not be empty")))
    assert agent.forwarder.drain() == IDLE_SECONDS
    failed = agent.outbox.get(tokens[0])
    assert (failed.state, failed.last_status, failed.last_error) == (
        "failed",
        400,
        "items: must not be empty",
    )
    assert [agent.outbox.get(t).state for t in tokens[1:]] == ["done", "done"]
    summary = agent.outbox.summary()
    assert (summary["pending"], summary["failed"]) == (0, 1)


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
        body = request["json"]
        return Reply(
            200,
            {
                "result": {
                    "data": {
                        "id": 1,
                        "token": body["token"],
                        "short_code": body["short_code"],
                    }
                }
            },
            delay=1.0,
        )

    fake_service.respond = slow
    agent.forwarder.start()
    assert arrived.wait(10)
    agent.forwarder.stop(10)
    assert not agent.forwarder._thread.is_alive()
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
