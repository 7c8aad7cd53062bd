"""A session lasts 30 days on its device; "Sign out" ends it, "Sign out everywhere" ends
every session of the contact."""

import pytest
from django.test import Client

from tests.locker.conftest import OTHER_PHONE

pytestmark = pytest.mark.django_db


def _is_signed_in(client) -> bool:
    return "Sign out everywhere" in client.get("/app/my").content.decode()


def test_sign_out_ends_this_session_only(client, two_shops, signed_in):
    phone, laptop = client, Client()
    signed_in(phone)
    signed_in(laptop)
    response = phone.post("/app/my/sign-out")
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    assert response.cookies["receco_locker"]["max-age"] == 0
    page = phone.get("/app/my").content.decode()
    assert "You are signed out on this device." in page
    assert not _is_signed_in(phone)
    assert _is_signed_in(laptop)


def test_sign_out_everywhere_ends_the_other_sessions(client, two_shops, signed_in):
    phone, laptop = client, Client()
    signed_in(phone)
    signed_in(laptop)
    response = phone.post("/app/my/sign-out-everywhere")
    assert response.status_code == 302
    assert "You are signed out on every device." in phone.get("/app/my").content.decode()
    assert not _is_signed_in(phone)
    assert not _is_signed_in(laptop)
    # A new sign-in after it works.
    signed_in(laptop)
    assert _is_signed_in(laptop)


def test_signing_out_everywhere_leaves_other_contacts_signed_in(client, two_shops, signed_in):
    theirs = Client()
    signed_in(theirs, OTHER_PHONE)
    signed_in(client)
    client.post("/app/my/sign-out-everywhere")
    assert _is_signed_in(theirs)


def test_a_session_ends_after_30_days(client, two_shops, signed_in, monkeypatch):
    import time

    signed_in(client)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 29 * 86400)
    assert _is_signed_in(client)
    monkeypatch.setattr(time, "time", lambda: now + 30 * 86400 + 1)
    assert not _is_signed_in(client)


def test_a_forged_session_is_refused(client, two_shops):
    client.cookies["receco_locker"] = '{"k":"sms","c":"+2348031234567","g":0}'
    assert not _is_signed_in(client)


def test_the_forms_need_their_csrf_token(two_shops, signed_in):
    browser = Client(enforce_csrf_checks=True)
    assert browser.post("/app/my/start", {"contact": "08031234567"}).status_code == 403
    assert browser.post("/app/my/code", {"code": "123456"}).status_code == 403
    assert browser.post("/app/my/sign-out-everywhere").status_code == 403


def test_a_session_key_is_deleted_once_no_session_of_it_can_live(client, two_shops, signed_in):
    from datetime import timedelta

    from django.utils import timezone

    from locker.models import SessionKey

    signed_in(client)
    SessionKey.objects.update(signed_in_at=timezone.now() - timedelta(days=30, seconds=1))
    signed_in(Client(), OTHER_PHONE)
    assert SessionKey.objects.count() == 1
    assert not _is_signed_in(client)
