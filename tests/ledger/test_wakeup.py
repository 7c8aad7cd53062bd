"""Appends happen without an operator: once a sale, a refund, a void or a set aside has
committed, the log's hook queues the appender for when the row is older than the commit
lag, at most once a second per process; the real task worker then appends it and
publishes a checkpoint, and its proof is served a few seconds after the sale."""

import os
import time
from datetime import timedelta

import pytest
from django.db import connection
from django_tasks_db.models import DBTaskResult

from ledger import tasks
from receco.lib import signingkeys
from receipts import refunds, writer
from tests.servers import start_worker

APPENDER = "ledger.tasks.append_log"


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def _appenders():
    return list(DBTaskResult.objects.filter(task_path=APPENDER).order_by("enqueued_at"))


def test_a_sale_queues_the_appender_for_when_it_is_old_enough(
    database_tasks, receipt_factory, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        receipt_factory(token="rcpt_woken000_aaaaaa", short_code="WOKEN0")
    (queued,) = _appenders()
    lag = timedelta(seconds=settings.RECECO_LOG_COMMIT_LAG)
    margin = timedelta(seconds=0.5)
    assert lag - margin <= queued.task.run_after - queued.enqueued_at <= lag + margin
    assert queued.args_kwargs == {"args": [], "kwargs": {}}  # nothing of the receipt travels in the queue


def test_a_burst_of_sales_queues_one_appender_a_second(
    database_tasks, receipt_factory, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(5):
            receipt_factory(token=f"rcpt_woken{n:03d}_aaaaaa", short_code="")
    # The first finds the first sale once it is old enough; the second, a second later, the others.
    first, second = _appenders()
    assert timedelta(seconds=0.9) <= second.task.run_after - first.task.run_after <= timedelta(seconds=1.1)


def test_refunds_voids_queue_it_and_a_contact_given_does_not(
    database_tasks, receipt_factory, django_capture_on_commit_callbacks
):
    sale = receipt_factory(token="rcpt_woken_refund_aa", short_code="WOKEN1")
    with django_capture_on_commit_callbacks(execute=True):
        writer.update_contact(sale, "ada@example.com", None)
    assert _appenders() == []
    with django_capture_on_commit_callbacks(execute=True):
        refunds.void(sale, "Rung up twice", keyed=True)
    assert len(_appenders()) == 1


def test_a_change_rolled_back_queues_nothing(database_tasks, receipt_factory):
    receipt_factory(token="rcpt_rolledback_aaaa", short_code="ROLLED")  # the test's transaction never commits
    assert _appenders() == []


def test_without_a_signing_key_nothing_is_queued(
    database_tasks, receipt_factory, settings, django_capture_on_commit_callbacks
):
    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            receipt_factory(token="rcpt_unsigned0_aaaaa", short_code="UNSIG0")
    finally:
        signingkeys.keyring.cache_clear()
    assert _appenders() == []


def test_the_immediate_backend_queues_nothing(receipt_factory, django_capture_on_commit_callbacks):
    """Development and tests: it cannot wait for the lag, so `appendlog` appends there."""
    with django_capture_on_commit_callbacks(execute=True):
        receipt_factory(token="rcpt_immediate_aaaaa", short_code="IMMED0")
    assert _appenders() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_with_the_real_worker_a_sales_proof_is_served_within_seconds(
    database_tasks, receipt_factory, client, settings, tmp_path
):
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    keys = os.environ["RECECO_SIGNING_KEYS"]  # the suite's: the worker signs with what the test verifies
    worker = start_worker(
        url, tmp_path / "worker.log", RECECO_SIGNING_KEYS=keys, RECECO_WEB_URL=settings.RECECO_WEB_URL
    )
    try:
        warm = receipt_factory(token="rcpt_warmup000_aaaaa", short_code="WARMUP")  # the worker has started
        assert _proof_within(client, warm.token, 60) is not None, worker.log.read_text()[-3000:]
        tasks.wake.forget()
        started = time.monotonic()
        sale = receipt_factory(token="rcpt_timed0000_aaaaa", short_code="TIMED0")
        waited = _proof_within(client, sale.token, 30)
    finally:
        worker.stop()
    assert waited is not None
    waited -= started
    bound = settings.RECECO_LOG_COMMIT_LAG + 3  # the lag, the wake-up's pace, the worker's poll, the cached checkpoint
    print(f"proof served {waited:.2f} s after the sale (commit lag {settings.RECECO_LOG_COMMIT_LAG} s)")
    assert settings.RECECO_LOG_COMMIT_LAG <= waited < bound


def _proof_within(client, token: str, seconds: float) -> float | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client.get(f"/log/proof/{token}").status_code == 200:
            return time.monotonic()
        time.sleep(0.05)
    return None
