"""The outbox with a real ``manage.py db_worker``: a slow receiver holds its own lane only
and is cut off at the deadline; a worker killed mid-send loses nothing (the sweep records
the lost attempt and tries again when its channel says); a worker lives through a
database that stalls."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from messaging.outbox import STALE_AFTER, sweep
from receipts.creation import create_receipt
from receipts.validation import validate_sale
from tests.receivers import SlowReceiver, SMTPServer
from tests.servers import start_gunicorn, start_worker
from webhooks.endpoints import create_endpoint
from webhooks.models import Delivery, Endpoint

# server: each test runs the task worker, in a process of its own.
pytestmark = [pytest.mark.postgres, pytest.mark.server, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def _worker(**extra: str) -> subprocess.Popen:
    """A worker on the test's database (committed rows: transaction=True), as production runs it."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="tests.settings",
        RECECO_TASKS_BACKEND="database",
        RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST="1",
        RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES="1",
        **extra,
    )
    command = [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload", "--interval", "0.1"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_slow_receiver_holds_its_own_lane_and_is_cut_off_at_10_seconds(
    database_tasks, merchant, other_merchant, sale, receiver
):
    """Issue 19, item 2: one shop's endpoint trickles its answer a byte every 2 seconds (it
    would take 2 minutes); another shop's event and a customer's email, queued after it,
    go out while it trickles, and the slow one is cut off after 10 seconds."""
    slow, smtp = SlowReceiver(every=2.0, length=60), SMTPServer()
    try:
        create_endpoint(merchant, slow.url)
        create_endpoint(other_merchant, receiver.url)
        create_receipt(merchant, validate_sale(sale))  # its event goes to the slow receiver, first
        theirs = {**sale, "token": "rcpt_other_shop_0001", "short_code": "", "customer_email": "ada@example.com"}
        create_receipt(other_merchant, validate_sale({**theirs, "merchant_string_id": other_merchant.string_id}))
        slow_delivery = Delivery.objects.to_endpoint(Endpoint.objects.get(url=slow.url)).get()
        worker = _worker(EMAIL_URL=f"smtp://127.0.0.1:{smtp.port}")
        try:
            assert _until(lambda: slow.arrived and receiver.requests and smtp.messages, 8), (
                slow.arrived,
                receiver.requests,
                smtp.messages,
            )
            slow_delivery.refresh_from_db()
            assert slow_delivery.status == "sending"  # still trickling meanwhile
            assert _until(lambda: Delivery.objects.get(pk=slow_delivery.pk).status != "sending", 20)
        finally:
            worker.kill()
            worker.wait(10)
    finally:
        slow.close()
        smtp.close()
    slow_delivery.refresh_from_db()
    assert slow_delivery.status == "retrying"
    attempt = slow_delivery.attempt_set.get()
    assert attempt.error == "no answer within 10 s"
    assert 10_000 <= attempt.duration_ms < 12_000


def test_a_worker_killed_mid_send_loses_nothing(database_tasks, merchant, sale, receiver, monkeypatch):
    arrived, release = threading.Event(), threading.Event()
    handle = receiver.server.RequestHandlerClass.do_POST

    def hang_the_first_time(handler):
        if not arrived.is_set():
            arrived.set()
            release.wait(30)  # the worker is killed meanwhile
        handle(handler)

    monkeypatch.setattr(receiver.server.RequestHandlerClass, "do_POST", hang_the_first_time)
    create_endpoint(merchant, receiver.url)
    create_receipt(merchant, validate_sale(sale))
    worker = _worker()
    try:
        assert arrived.wait(30), "the worker never sent the event"
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        worker.kill()
        release.set()
    delivery = Delivery.objects.get()
    assert delivery.status == "sending"  # claimed, never answered

    assert sweep(now=timezone.now() + STALE_AFTER + timedelta(seconds=1)) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("retrying", 1)
    assert delivery.attempt_set.get().error == "no outcome: the sender stopped while sending"
    assert sweep(now=delivery.next_attempt_at) == 1
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    ids = [request["headers"]["Receco-Event-Id"] for request in receiver.requests]
    assert ids[-1] == delivery.event.public_id  # delivered: at least once (the cut-off request may count too)


# --- A database that stalls (issue 19, item 12) ----------------------------------------


@pytest.fixture(scope="module")
def stalling(private_cluster, tmp_path_factory):
    """The service (gunicorn) and one task worker, both with short database deadlines, on a
    PostgreSQL server of the suite's own (private_cluster), which the test may pause."""
    folder = tmp_path_factory.mktemp("stalling")
    url = private_cluster.migrated_database("receco_worker")
    deadlines = {"DATABASE_STATEMENT_TIMEOUT": "2", "DATABASE_CONNECT_TIMEOUT": "2"}
    server = start_gunicorn(url, folder / "gunicorn.log", **deadlines)
    # A connection of its own for each poll: a poll in a stall then meets the connection
    # attempt that times out, whatever the moment the stall begins.
    worker = start_worker(url, folder / "worker.log", DATABASE_CONN_MAX_AGE="0", **deadlines)
    try:
        yield private_cluster, url, server, worker
    finally:
        worker.stop()
        server.stop()


def _sell_with_contact(server, token: str) -> None:
    sale = {
        "token": token,
        "merchant_string_id": "test-stall",  # a test receipt: its email goes to the sink
        "total_amount": 2500,
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
        "customer_email": "ada@example.com",
    }
    request = urllib.request.Request(
        f"{server.url}/api/trpc/createReceiptFromPOS", json.dumps(sale).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        assert response.status == 200


def _delivered(url: str, token: str, seconds: float) -> str | None:
    """The status of the delivery of ``token``'s receipt once it is no longer on its way (or None)."""
    query = (
        "SELECT d.status FROM messaging_delivery d JOIN receipts_receipt r ON r.id = d.receipt_id WHERE r.token = %s"
    )
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with psycopg.connect(url) as connection:
            row = connection.execute(query, [token]).fetchone()
        if row and row[0] not in ("pending", "sending"):
            return row[0]
        time.sleep(0.2)
    return None


# What the worker logs when a connection attempt finds the database not answering.
# The worker met the stall: a poll's connection attempt timed out, or a statement the stall
# caught in flight was cut at its deadline (receco.lib.postgresql.watchdog), whichever came.
TIMED_OUT = re.compile(r"database not available \((?:.*timeout expired.*|the connection is closed)\): trying again")


def _timeouts(worker) -> int:
    return len(TIMED_OUT.findall(worker.log.read_text()))


def test_the_worker_survives_a_database_stall_and_goes_on(stalling):
    """django-tasks-db's own worker exited on 'connection timeout expired' when the database
    stalled (a 15-second SIGSTOP of the server). The stall lasts here until the worker has
    met it: a poll connects to a server that accepts in the kernel and answers nothing,
    and the attempt times out (DATABASE_CONNECT_TIMEOUT, 2 s)."""
    cluster, url, server, worker = stalling
    _sell_with_contact(server, "rcpt_before_stall_01")
    assert _delivered(url, "rcpt_before_stall_01", 30) == "sink"
    before = _timeouts(worker)
    cluster.pause()
    try:
        assert _until(lambda: _timeouts(worker) > before, 60), worker.log.read_text()[-3000:]
    finally:
        cluster.resume()
    assert worker.alive(), worker.log.read_text()[-3000:]
    _sell_with_contact(server, "rcpt_after_stall_01")
    assert _delivered(url, "rcpt_after_stall_01", 30) == "sink", worker.log.read_text()[-3000:]
