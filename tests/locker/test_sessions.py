"""A session lasts 30 days on its device; "Sign out" ends it, "Sign out everywhere" ends
every session of the contact. Its cookie, and the cookie of a sign-in under way, hold a
random token and nothing else."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from locker.models import Session, SignIn
from tests.locker.conftest import OTHER_PHONE, PHONE, TYPED_PHONE, ask, texted_code

# A cookie's whole value: 32 random bytes, URL-safe base64 (locker.sessions.new_token).
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")

pytestmark = pytest.mark.django_db


def _is_signed_in(client) -> bool:
    return "Sign out everywhere" in client.get("/app/my").content.decode()


def test_sign_out_ends_this_session_only(client, two_shops, signed_in):
    phone, laptop = client, Client()
    signed_in(phone)
    signed_in(laptop)
    kept = phone.cookies["receco_locker"].value
    response = phone.post("/app/my/sign-out")
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    assert response.cookies["receco_locker"]["max-age"] == 0
    page = phone.get("/app/my").content.decode()
    assert "You are signed out on this device." in page
    assert not _is_signed_in(phone)
    assert _is_signed_in(laptop)
    # The session itself is gone, not only its cookie: a copy of the cookie opens nothing.
    replayed = Client()
    replayed.cookies["receco_locker"] = kept
    assert not _is_signed_in(replayed)
    assert Session.objects.count() == 1


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


def test_a_session_ends_after_30_days(client, two_shops, signed_in):
    response = signed_in(client)
    assert response.cookies["receco_locker"]["max-age"] == 30 * 86400
    session = Session.objects.get()
    assert session.expires_at - session.created_at == pytest.approx(timedelta(days=30), abs=timedelta(seconds=2))
    Session.objects.update(expires_at=timezone.now() + timedelta(seconds=30))
    assert _is_signed_in(client)
    Session.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert not _is_signed_in(client)


def test_a_forged_session_is_refused(client, two_shops, signed_in):
    client.cookies["receco_locker"] = '{"k":"sms","c":"+2348031234567","g":0}'
    assert not _is_signed_in(client)
    signed_in(Client())  # someone's session exists; a guessed token is not it
    client.cookies["receco_locker"] = "A" * 43
    assert not _is_signed_in(client)


def test_the_cookies_hold_random_tokens_and_nothing_else(client, two_shops, django_capture_on_commit_callbacks):
    """They held the number in clear (signed, not encrypted) for 30 days, and the sign-in's
    id, which counts up."""
    with django_capture_on_commit_callbacks(execute=True):
        asked = ask(client, TYPED_PHONE)
    pending = asked.cookies["receco_locker_signin"]
    assert TOKEN.fullmatch(pending.value), pending.value
    assert str(SignIn.objects.get().pk) not in pending.value.split("_")
    signed = client.post("/app/my/code", {"code": texted_code()})
    session = signed.cookies["receco_locker"].value
    assert TOKEN.fullmatch(session), session
    for form in (PHONE, PHONE.lstrip("+"), "8031234567", "sms"):
        assert form not in session
    # The database keeps a digest of the token, never the token.
    assert session not in Session.objects.values_list("token_digest", flat=True).get()


def test_erasing_on_one_device_leaves_nothing_on_the_others(client, two_shops, signed_in):
    """An erasure ended the other devices' sessions, but their cookies kept the number
    for 30 days. Now they hold a token that names nothing, and go at the next visit."""
    phone, laptop = client, Client()
    signed_in(phone)
    signed_in(laptop)
    phone.post("/app/my/erase")
    assert not Session.objects.exists()
    left = laptop.cookies["receco_locker"].value
    assert PHONE.lstrip("+") not in left
    answer = laptop.get("/app/my")
    assert "Sign out everywhere" not in answer.content.decode()
    assert answer.cookies["receco_locker"]["max-age"] == 0  # the stale cookie is deleted


def test_the_forms_need_their_csrf_token(two_shops, signed_in):
    browser = Client(enforce_csrf_checks=True)
    assert browser.post("/app/my/start", {"contact": "08031234567"}).status_code == 403
    assert browser.post("/app/my/code", {"code": "123456"}).status_code == 403
    assert browser.post("/app/my/sign-out-everywhere").status_code == 403


def test_expired_sessions_are_deleted_by_the_next_sign_in(client, two_shops, signed_in):
    signed_in(client)
    Session.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    signed_in(Client(), OTHER_PHONE)
    assert list(Session.objects.values_list("contact", flat=True)) == [OTHER_PHONE]
    assert not _is_signed_in(client)
