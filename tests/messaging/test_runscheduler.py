"""runscheduler: the periodic jobs in one process, as the compose scheduler and ./dev up run them."""

import logging
import signal
import time

import pytest
from django.core.management import call_command

from ledger.models import Leaf
from messaging.management.commands.runscheduler import DAY, JOBS, MINUTES, Schedule
from receco.lib import signingkeys
from tests import databases
from tests.servers import start_command


def test_the_jobs_and_their_schedule():
    assert [(str(job), job.every) for job in JOBS] == [
        ("flushusage", 5 * MINUTES),
        ("senddeliveries", 5 * MINUTES),
        ("sendwebhooks", 5 * MINUTES),
        ("appendlog --once", 5 * MINUTES),
        ("applyretention", DAY),
    ]


def test_over_two_days_retention_runs_at_start_and_once_a_day_the_others_every_five_minutes():
    schedule, now, ran = Schedule(JOBS, 0.0), 0.0, []
    while now <= 2 * DAY:
        for job in schedule.due(now):
            ran.append(job.command)
            schedule.ran(job, now)
        now = schedule.next_run()
    assert ran.count("sendwebhooks") == 577  # 2 days of 288 rounds, and the one at start
    assert ran.count("appendlog") == 577
    assert ran.count("applyretention") == 3  # at start, after one day, after two


def test_once_runs_every_job(receipt_factory, settings, capsys):
    settings.RECECO_LOG_COMMIT_LAG = 0
    receipt_factory()
    call_command("runscheduler", once=True)
    out = capsys.readouterr().out
    assert "Flushed 0 API calls into the usage table" in out
    assert "Appended 1: the log holds 1, checkpoint at 1" in out
    assert "0 receipts removed" in out
    assert Leaf.objects.count() == 1


def test_quiet_it_prints_nothing_of_the_jobs(receipt_factory, settings, capsys):
    settings.RECECO_LOG_COMMIT_LAG = 0
    receipt_factory()
    call_command("runscheduler", once=True, verbosity=0)
    assert capsys.readouterr().out == ""
    assert Leaf.objects.count() == 1


def test_a_failing_job_is_logged_and_the_others_run_on(receipt_factory, settings, capsys, caplog):
    receipt_factory()
    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        with caplog.at_level(logging.ERROR, logger="messaging.management.commands.runscheduler"):
            call_command("runscheduler", once=True)
    finally:
        signingkeys.keyring.cache_clear()
    assert [record.getMessage() for record in caplog.records] == ["runscheduler: appendlog --once failed"]
    assert "Signing is off: no signing key configured" in caplog.records[0].exc_text
    assert "0 receipts removed" in capsys.readouterr().out  # the job after it


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_it_runs_every_job_at_start_then_waits_until_stopped(tmp_path, number):
    database_url = databases.copy_sqlite(tmp_path / "db.sqlite3")
    process = start_command(database_url, "runscheduler", stderr=tmp_path / "errors.log")
    try:
        lines = []
        while not any("receipts removed" in line for line in lines):  # the last job of the first round
            line = process.stdout.readline().decode()
            assert line, (tmp_path / "errors.log").read_text()
            lines.append(line)
        assert process.poll() is None  # waits for the next round, five minutes on
        stopped = time.monotonic()
        process.send_signal(number)
        assert process.wait(timeout=30) == 0
        print(f"\nrunscheduler stopped {time.monotonic() - stopped:.2f} s after the signal")
    finally:
        process.kill()
        process.wait()
    assert [line.split(";")[0].strip() for line in lines] == [
        "Flushed 0 API calls into the usage table",
        "0 deliveries queued.",  # senddeliveries
        "0 deliveries queued.",  # sendwebhooks
        "0 receipts removed",  # applyretention (appendlog --once, with nothing to append, says nothing)
    ]
