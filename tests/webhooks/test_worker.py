"""A real ``manage.py db_worker`` killed with SIGKILL while it sends an event loses nothing:
the delivery stays "sending", the sweep queues it again, and the next worker sends it."""

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks.endpoints import create_endpoint
from webhooks.models import Delivery
from webhooks.outbox import STALE_AFTER, requeue_due

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def _worker() -> subprocess.Popen:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="tests.settings",
        RECECO_TASKS_BACKEND="database",
        RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST="1",
        RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES="1",
    )
    command = [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload", "--interval", "0.1"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


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

    assert requeue_due(now=timezone.now() + STALE_AFTER + timedelta(seconds=1)) == 1
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    delivery.refresh_from_db()
    assert delivery.status == "succeeded"
    ids = [request["headers"]["Receco-Event-Id"] for request in receiver.requests]
    assert ids[-1] == delivery.event.public_id  # delivered: at least once (the cut-off request may count too)
