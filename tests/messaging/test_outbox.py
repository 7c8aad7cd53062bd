"""The outbox: the sink for test receipts, failures and retries with each channel's
back-off, the sweep, one dispatcher in the database worker (messaging.outbox)."""

import logging
import smtplib
import threading
import time
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from messaging import outbox, senders, sms
from messaging.models import Delivery
from messaging.transports import EmailTransport
from receipts.writer import update_contact

pytestmark = pytest.mark.django_db

EMAIL = "customer@example.com"
PHONE = "+2348031234589"


class FlakySMTP:
    """An email backend whose server hangs up, quoting the recipient as real servers do."""

    calls = 0

    def __init__(self, **kwargs):
        pass

    def send_messages(self, messages):
        FlakySMTP.calls += 1
        raise smtplib.SMTPServerDisconnected(f"Connection closed while sending to {messages[0].to[0]}")


class RefusingSMTP(FlakySMTP):
    def send_messages(self, messages):
        raise smtplib.SMTPRecipientsRefused({messages[0].to[0]: (550, b"5.1.1 No such user")})


@pytest.fixture
def flaky_smtp(settings):
    FlakySMTP.calls = 0
    settings.EMAIL_BACKEND = f"{__name__}.FlakySMTP"


@pytest.fixture
def attach(django_capture_on_commit_callbacks):
    def run(receipt, email=None, phone=None):
        with django_capture_on_commit_callbacks(execute=True):
            return update_contact(receipt, email, phone)

    return run


# --- test receipts never reach a customer ---------------------------------------------


def test_test_receipts_go_to_the_sink_never_to_smtp_or_the_provider(attach, test_receipt, settings):
    # Real transports pointed at closed ports: using either would fail the delivery.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9
    settings.RECECO_SMS_BACKEND = "webhook"
    settings.RECECO_SMS_WEBHOOK_URL = "http://127.0.0.1:9/sms"
    attach(test_receipt, EMAIL, PHONE)
    assert sorted(test_receipt.deliveries.values_list("channel", "status", "last_error")) == [
        ("email", "sink", ""),
        ("sms", "sink", ""),
    ]
    assert not mail.outbox
    assert not sms.outbox


# --- failures and retries -------------------------------------------------------------


def test_a_failure_is_retried_later_with_the_address_masked(attach, receipt, flaky_smtp):
    before = timezone.now()
    attach(receipt, EMAIL)
    delivery = receipt.deliveries.get()
    assert delivery.status == "retrying"
    assert delivery.attempts == 1
    assert delivery.last_error == "SMTPServerDisconnected: Connection closed while sending to c*******@example.com"
    assert before + timedelta(minutes=1) <= delivery.next_attempt_at <= timezone.now() + timedelta(minutes=1.3)


def test_a_retry_that_succeeds_is_sent(attach, receipt, flaky_smtp, settings):
    attach(receipt, EMAIL)
    assert outbox.sweep() == 0  # not due yet
    Delivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert outbox.sweep() == 1
    delivery = receipt.deliveries.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 2, "")
    assert len(mail.outbox) == 1


def test_it_gives_up_after_the_last_attempt(attach, receipt, flaky_smtp, settings):
    settings.RECECO_DELIVERY_MAX_ATTEMPTS = 3
    attach(receipt, EMAIL)
    for _ in range(4):
        Delivery.objects.filter(status="retrying").update(next_attempt_at=timezone.now())
        outbox.sweep()
    delivery = receipt.deliveries.get()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 3, None)
    assert FlakySMTP.calls == 3


def test_a_refused_address_is_not_retried(attach, receipt, settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingSMTP"
    attach(receipt, EMAIL)
    delivery = receipt.deliveries.get()
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    assert EMAIL not in delivery.last_error
    assert "c*******@example.com" in delivery.last_error


def test_the_pause_between_attempts_grows_fourfold_and_is_capped(settings):
    retry = EmailTransport().retry()
    assert timedelta(minutes=1) <= retry.delay(1) <= timedelta(minutes=1.2)
    assert timedelta(minutes=4) <= retry.delay(2) <= timedelta(minutes=4.8)
    assert timedelta(minutes=16) <= retry.delay(3) <= timedelta(minutes=19.2)
    assert timedelta(hours=6) <= retry.delay(20) <= timedelta(hours=7.2)
    settings.RECECO_DELIVERY_MAX_ATTEMPTS = 7
    assert EmailTransport().retry().attempts == 7


def test_a_delivery_is_sent_once_even_if_the_dispatcher_runs_twice(attach, receipt):
    attach(receipt, EMAIL)
    assert outbox.dispatch(threads=False) == (0, False)  # claimed and sent already: nothing to claim
    assert outbox.send(receipt.deliveries.get().pk) is None  # and not sent unless claimed
    assert len(mail.outbox) == 1
    assert receipt.deliveries.get().attempts == 1


def test_a_delivery_whose_task_was_lost_is_sent_by_the_sweep(receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # the process died before enqueueing
        update_contact(receipt, EMAIL, None)
    assert outbox.sweep() == 0  # still fresh: its task may be in the queue
    Delivery.objects.update(updated_at=timezone.now() - timedelta(minutes=20))
    assert outbox.sweep() == 1
    assert receipt.deliveries.get().status == "sent"
    assert len(mail.outbox) == 1


def test_the_senddeliveries_command_runs_the_sweep(receipt, attach, flaky_smtp, settings, capsys):
    attach(receipt, EMAIL)
    Delivery.objects.update(next_attempt_at=timezone.now())
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    call_command("senddeliveries")
    assert capsys.readouterr().out == "1 deliveries queued.\n"
    assert receipt.deliveries.get().status == "sent"


def test_no_personal_data_in_the_logs(attach, receipt, receipt_factory, flaky_smtp, settings, caplog):
    caplog.set_level(logging.DEBUG)
    attach(receipt, EMAIL, PHONE)
    settings.EMAIL_BACKEND = "receipts.no.such.Backend"  # an unforeseen error, traceback logged
    other = receipt_factory(token="rcpt_other_0000001", short_code="OTHER1")
    attach(other, "someone.else@example.com")
    assert "c*******@example.com" in caplog.text
    assert "+234*******89" in caplog.text
    for secret in (EMAIL, "customer@", PHONE, PHONE[1:], "someone.else"):
        assert secret not in caplog.text


# --- production: the database queue and its worker --------------------------------------


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def test_the_database_backend_queues_the_dispatcher_with_no_personal_data(attach, receipt, database_tasks):
    attach(receipt, EMAIL, PHONE)
    assert not mail.outbox  # nothing sent by the web process
    tasks = DBTaskResult.objects.order_by("enqueued_at")
    assert {task.task_path for task in tasks} == {"messaging.outbox.dispatch_deliveries"}
    assert {str(task.args_kwargs) for task in tasks} == {str({"args": [], "kwargs": {}})}
    assert tasks[0].task.run_after is None  # at once; a second wake-up of the same process a second later


# The worker closes its database connection when it stops: these tests cannot run
# inside the per-test transaction.
@pytest.mark.django_db(transaction=True)
def test_the_worker_sends_queued_deliveries(attach, receipt, database_tasks):
    attach(receipt, EMAIL, PHONE)
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    assert len(mail.outbox) == 1
    assert len(sms.outbox) == 1
    assert set(receipt.deliveries.values_list("status", flat=True)) == {"sent"}


@pytest.mark.django_db(transaction=True)
def test_the_worker_schedules_retries_itself(attach, receipt, database_tasks, flaky_smtp):
    attach(receipt, EMAIL)
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    delivery = receipt.deliveries.get()
    assert delivery.status == "retrying"
    retry = DBTaskResult.objects.filter(status="READY").get()
    assert retry.run_after == delivery.next_attempt_at


# --- claims and lanes -----------------------------------------------------------------


def _pending(receipt, channel, destination):
    return Delivery.objects.create(merchant=receipt.merchant, receipt=receipt, channel=channel, destination=destination)


def test_a_claim_takes_the_oldest_first_and_none_on_a_full_lane(receipt):
    first, second = _pending(receipt, "email", EMAIL), _pending(receipt, "email", "b@example.com")
    text = _pending(receipt, "sms", PHONE)
    assert outbox.claim(["email"]) == [(text.pk, "sms", PHONE)]  # every email goes through the one SMTP server
    assert [pk for pk, _, _ in outbox.claim(limit=5)] == [first.pk, second.pk]
    claimed = Delivery.objects.get(pk=first.pk)
    assert (claimed.status, claimed.attempts) == ("sending", 1)  # counted at the claim: a killing message ends


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_claim_skips_what_another_dispatcher_is_claiming(receipt):
    import psycopg

    first, second = _pending(receipt, "email", EMAIL), _pending(receipt, "sms", PHONE)
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"]) as other:
        other.execute("SELECT id FROM messaging_delivery WHERE id = %s FOR UPDATE", [first.pk])  # holds it
        assert outbox.claim(limit=5) == [(second.pk, "sms", PHONE)]
    assert outbox.claim(limit=5) == [(first.pk, "email", EMAIL)]


def test_senders_serve_every_lane_while_one_is_slow():
    """Two senders, one lane whose sends hang until released: the other lane's work is all
    sent meanwhile, and the slow lane never holds more than its places."""
    work = [("slow", 1), ("slow", 2), ("slow", 3), ("fast", 4), ("fast", 5), ("fast", 6)]
    release, done, lock = threading.Event(), [], threading.Lock()
    busy, most = {"slow": 0}, {"slow": 0}

    def take(full):
        with lock:
            for item in work:
                if item[0] not in full:
                    work.remove(item)
                    return item
        return None

    def send(number):
        if number < 4:
            with lock:
                busy["slow"] += 1
                most["slow"] = max(most["slow"], busy["slow"])
            if len(done) < 3:  # the slow lane hangs until the fast lane is through
                release.wait(30)
            with lock:
                busy["slow"] -= 1
        done.append(number)
        if sorted(n for n in done if n >= 4) == [4, 5, 6]:
            release.set()

    sent, late = senders.run(2, 1, time.monotonic() + 60, take, send, lambda: None)
    assert (sent, late) == (6, False)
    assert done[:3] == [4, 5, 6]  # all of the fast lane before any of the slow
    assert most["slow"] == 1  # at most per_lane senders on the slow lane


def test_the_sweep_records_a_delivery_whose_sender_died_as_a_failed_attempt(receipt, settings):
    settings.RECECO_DELIVERY_MAX_ATTEMPTS = 2
    lost = _pending(receipt, "email", EMAIL)
    ((pk, _, _),) = outbox.claim()  # claimed, then its worker was killed: no outcome recorded
    later = timezone.now() + outbox.STALE_AFTER + timedelta(seconds=1)
    assert outbox.sweep(now=later) == 1
    lost.refresh_from_db()
    assert (lost.status, lost.attempts) == ("retrying", 1)
    assert lost.last_error == "no outcome: the sender stopped while sending"
    assert lost.next_attempt_at >= later + timedelta(minutes=1)  # the channel's back-off
    assert outbox.sweep(now=later) == 0  # recorded once
    ((pk, _, _),) = outbox.claim(now=lost.next_attempt_at)
    assert outbox.sweep(now=lost.next_attempt_at + outbox.STALE_AFTER + timedelta(seconds=1)) == 1
    lost.refresh_from_db()
    assert (lost.status, lost.attempts) == ("failed", 2)  # a message that kills its sender ends
