"""The appender as a command and as a task."""

from django.core.management import call_command

from ledger.models import Leaf
from ledger.tasks import append_log


def test_appendlog_once_appends_what_is_committed_and_publishes_a_checkpoint(receipt_factory, settings, capsys):
    settings.RECECO_LOG_COMMIT_LAG = 0
    receipt_factory()
    receipt_factory(token="rcpt_commanded_aaaaa", short_code="CMND01")
    call_command("appendlog", once=True)
    assert "Appended 2: the log holds 2, checkpoint at 2" in capsys.readouterr().out
    call_command("appendlog", once=True)
    assert capsys.readouterr().out == ""  # nothing new, nothing said


def test_the_task_appends_in_batches(receipt_factory, settings):
    settings.RECECO_LOG_COMMIT_LAG = 0
    receipt_factory()
    assert append_log.call() == 1
    assert Leaf.objects.count() == 1
