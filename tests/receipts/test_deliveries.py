"""Sending receipts: scheduling, the email and text, retries, the sink, the database worker."""

import logging
import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from receipts import sms
from receipts.deliveries import attach_contact, requeue_due
from receipts.messages import compose_email, compose_sms
from receipts.models import Delivery
from receipts.sending import retry_delay, run_delivery

pytestmark = pytest.mark.django_db

# GSM 03.38 basic character set (without the escape): texts in it are sent 160 characters a part.
GSM_BASIC = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿"
    "abcdefghijklmnopqrstuvwxyzäöñüà"
)
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
            return attach_contact(receipt, email, phone)

    return run


# --- what triggers a delivery -------------------------------------------------------


def test_update_receipt_contact_sends_the_receipt(api, receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        status, _ = api.post("updateReceiptContact", {"token": receipt.token, "email": EMAIL, "phone": PHONE})
    assert status == 200
    assert [m.to for m in mail.outbox] == [[EMAIL]]
    assert [m.to for m in sms.outbox] == [PHONE]
    assert sorted(receipt.deliveries.values_list("channel", "status")) == [("email", "sent"), ("sms", "sent")]


def test_a_sale_that_carries_a_contact_sends_the_receipt_once(api, sale, django_capture_on_commit_callbacks):
    body = {**sale, "customer_email": EMAIL}
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("createReceiptFromPOS", body)[0] == 200
        assert api.post("createReceiptFromPOS", body)[0] == 200  # the idempotent replay
    assert len(mail.outbox) == 1
    assert Delivery.objects.count() == 1


def test_nothing_is_sent_before_the_transaction_commits(receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        attach_contact(receipt, EMAIL, None)
    assert not mail.outbox
    assert receipt.deliveries.get().status == "queued"
    assert len(callbacks) == 1


def test_a_queue_that_cannot_be_reached_does_not_fail_the_request(
    api, receipt, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(*args, **kwargs):
        raise ConnectionError("queue down")

    monkeypatch.setattr("receipts.deliveries.enqueue", broken)
    with django_capture_on_commit_callbacks(execute=True):
        status, _ = api.post("updateReceiptContact", {"token": receipt.token, "email": EMAIL})
    assert status == 200
    assert receipt.deliveries.get().status == "queued"  # for the sweep


# --- the messages -------------------------------------------------------------------


def test_the_email_has_text_and_html_parts_with_the_link(receipt):
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Mama Put Kitchen: ₦1,300.00"
    assert message.to == [EMAIL]
    assert message.from_email == "Mama Put Kitchen <receipts@localhost>"
    assert message.extra_headers["Auto-Submitted"] == "auto-generated"
    assert "https://receipts.example.test/app/receipt/K7P2QX\n" in message.body
    assert "Jollof rice\n  2 x ₦500.00 = ₦1,000.00" in message.body
    assert "TOTAL: ₦1,300.00" in message.body
    assert "22 November 2026, 11:15 WAT" in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html"
    assert '<a href="https://receipts.example.test/app/receipt/K7P2QX"' in html
    assert "background:#c2410c;color:#ffffff" in html
    # A well-formed MIME message: multipart/alternative, text first, then HTML.
    mime = message.message()
    assert mime.get_content_type() == "multipart/alternative"
    assert [part.get_content_type() for part in mime.get_payload()] == ["text/plain", "text/html"]


def _named(merchant, name):
    merchant.name = name
    merchant.save()


def test_the_email_escapes_merchant_fields_in_html_only(receipt_factory, merchant):
    _named(merchant, "Ade & Sons <b>")
    receipt = receipt_factory(total_amount=1)
    receipt.items = [{"name": "<script>x</script>", "quantity": 1, "unit_price": 1, "total_price": 1}]
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Ade & Sons <b>: ₦0.01"
    assert "<script>x</script>" in message.body  # plain text is not HTML
    html = message.alternatives[0][0]
    assert "<script>x" not in html
    assert "Ade &amp; Sons &lt;b&gt;" in html


def test_messages_never_carry_a_token_the_pos_chose(receipt_factory):
    # A token is the POS's to choose: one that says anything it likes must not reach the
    # customer's phone or inbox as the service's words. Messages link by short code.
    receipt = receipt_factory(token="Call-08031234567-to-claim-your-prize")
    text = compose_sms(receipt)
    message = compose_email(receipt, EMAIL)
    assert text.endswith(": https://receipts.example.test/app/receipt/K7P2QX")
    for body in (text, message.body, message.alternatives[0][0]):
        assert "claim-your-prize" not in body


def test_a_merchant_name_cannot_inject_headers(receipt_factory, merchant):
    _named(merchant, "Shop\r\nBcc: victim@example.com")
    receipt = receipt_factory()
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Shop Bcc: victim@example.com: ₦1,300.00"
    assert "\nBcc:" not in message.message().as_string().split("\n\n")[0]


def test_the_text_message_is_short_and_in_the_gsm_alphabet(receipt_factory, merchant):
    _named(merchant, "A very long merchant name that goes on and on and on")
    receipt = receipt_factory()
    text = compose_sms(receipt)
    assert text == (
        "Your receipt from A very long merchant name that goes o..., NGN 1,300.00: "
        "https://receipts.example.test/app/receipt/K7P2QX"
    )
    assert set(text) <= GSM_BASIC  # 160 characters a part, not 70
    assert len(text) <= 160


def test_test_receipts_say_so(test_receipt):
    assert compose_email(test_receipt, EMAIL).subject.startswith("[TEST] ")
    assert compose_sms(test_receipt).startswith("[TEST] ")


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
    assert requeue_due() == 0  # not due yet
    Delivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert requeue_due() == 1
    delivery = receipt.deliveries.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 2, "")
    assert len(mail.outbox) == 1


def test_it_gives_up_after_the_last_attempt(attach, receipt, flaky_smtp, settings):
    settings.RECECO_DELIVERY_MAX_ATTEMPTS = 3
    attach(receipt, EMAIL)
    for _ in range(4):
        Delivery.objects.filter(status="retrying").update(next_attempt_at=timezone.now())
        requeue_due()
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


def test_the_pause_between_attempts_grows_and_is_capped():
    assert timedelta(minutes=1) <= retry_delay(1) <= timedelta(minutes=1.2)
    assert timedelta(minutes=4) <= retry_delay(2) <= timedelta(minutes=4.8)
    assert timedelta(minutes=16) <= retry_delay(3) <= timedelta(minutes=19.2)
    assert timedelta(hours=6) <= retry_delay(20) <= timedelta(hours=7.2)


def test_a_delivery_runs_once_even_if_its_task_runs_twice(attach, receipt):
    attach(receipt, EMAIL)
    delivery = receipt.deliveries.get()
    assert run_delivery(delivery.pk).status == "sent"
    assert len(mail.outbox) == 1
    assert receipt.deliveries.get().attempts == 1


def test_a_delivery_whose_task_was_lost_is_sent_by_the_sweep(receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # the process died before enqueueing
        attach_contact(receipt, EMAIL, None)
    assert requeue_due() == 0  # still fresh: its task may be in the queue
    Delivery.objects.update(updated_at=timezone.now() - timedelta(minutes=20))
    assert requeue_due() == 1
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


def test_the_database_backend_queues_only_the_delivery_id(attach, receipt, database_tasks):
    attach(receipt, EMAIL)
    assert not mail.outbox  # nothing sent by the web process
    task = DBTaskResult.objects.get()
    assert task.task_path == "receipts.tasks.send_delivery"
    assert task.args_kwargs == {"args": [receipt.deliveries.get().pk], "kwargs": {}}


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


def test_the_email_is_from_the_shop_and_replies_reach_its_support(receipt_factory, merchant):
    merchant.support_email = "help@mamaput.example.com"
    merchant.save()
    message = compose_email(receipt_factory(), EMAIL)
    assert message.from_email == "Mama Put Kitchen <receipts@localhost>"
    assert message.reply_to == ["help@mamaput.example.com"]


def test_a_shop_without_support_address_has_no_reply_to(receipt_factory):
    assert compose_email(receipt_factory(), EMAIL).reply_to == []


def test_a_refund_says_so_in_the_text_message(api, stored, live_key):
    from receipts.models import Receipt

    _, body = api.post("refundReceipt", {"token": stored.token, "amount": 5000}, Authorization=f"Bearer {live_key.key}")
    refund = Receipt.objects.get(token=body["result"]["data"]["token"])
    assert compose_sms(refund).startswith("Your refund from Mama Put Kitchen, NGN 50.00: ")
    message = compose_email(refund, EMAIL)
    assert message.subject == "Your refund receipt from Mama Put Kitchen: ₦50.00"
    assert "REFUND of receipt STORE1." in message.body
