"""The locker's share of retention (locker.retention): every run of ``applyretention``
deletes the sign-ins and the sessions that have expired, contacts with them, though no
one signed in since; what is still live stays."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from locker.models import Session, SignIn
from privacy import retention
from privacy.models import ErasureRecord
from tests.locker.conftest import EMAIL, OTHER_PHONE, PHONE, ask

pytestmark = pytest.mark.django_db


def test_an_expired_sign_in_is_gone_after_the_daily_run_with_no_sign_in_between(client, two_shops, capsys):
    ask(client, PHONE)
    ask(Client(), EMAIL)
    SignIn.objects.filter(contact=PHONE).update(expires_at=timezone.now() - timedelta(seconds=1))

    call_command("applyretention")

    assert list(SignIn.objects.values_list("contact", flat=True)) == [EMAIL]  # the live one stays
    assert capsys.readouterr().out == (
        "0 receipts removed; contacts removed from 0 receipts, 0 deliveries and 0 webhook events; "
        "1 expired locker sign-ins and sessions deleted\n"
    )
    record = ErasureRecord.objects.get()
    assert (record.via, record.counts["locker"]) == ("retention", 1)


def test_a_sign_in_expiring_this_very_moment_is_purged():
    now = timezone.now()
    SignIn.objects.create(kind="sms", contact=PHONE, nonce="0" * 32, expires_at=now)
    SignIn.objects.create(kind="email", contact=EMAIL, nonce="1" * 32, expires_at=now + timedelta(microseconds=1))

    assert retention.apply(now=now).counts["locker"] == 1
    assert list(SignIn.objects.values_list("contact", flat=True)) == [EMAIL]


def test_an_expired_session_goes_with_the_daily_run(client, two_shops, signed_in, capsys):
    signed_in(client)
    other = Client()
    signed_in(other, OTHER_PHONE)
    stale, live = Session.objects.order_by("pk")
    Session.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    capsys.readouterr()

    call_command("applyretention")

    assert list(Session.objects.values_list("pk", flat=True)) == [live.pk]
    assert capsys.readouterr().out.endswith("; 1 expired locker sign-ins and sessions deleted\n")
    assert "Sign out everywhere" in other.get("/app/my").content.decode()  # still signed in
    assert "Sign out everywhere" not in client.get("/app/my").content.decode()


def test_a_run_with_nothing_to_purge_keeps_no_record(client, two_shops):
    ask(client, PHONE)
    call_command("applyretention")
    assert SignIn.objects.count() == 1
    assert not ErasureRecord.objects.exists()
