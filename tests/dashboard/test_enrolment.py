"""Setting up two-step sign-in takes proof beyond the password (dashboard.enrolment):
issue 32.9's "enrolled on first use" replayed through the real sign-in pages, then each
proof: the emailed set-up link, the operator's link, the team invitation, a code from the
app being replaced, and the recovery codes that come with a set-up."""

import re
from base64 import b32decode
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.utils import timezone
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from dashboard import enrolment, team, twofactor
from merchants.models import TwoStepLink

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/merchants/merchant/"
PASSWORD = "not-used-in-tests"
IP = "203.0.113.7"
EMAIL = "olu@mama-put.example"
LINK = re.compile(r"https?://[^/\s]+(/admin/two-step/link/\?key=\S+)")


@pytest.fixture(autouse=True)
def required(settings):
    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    settings.OTP_STATIC_THROTTLE_FACTOR = 0


@pytest.fixture
def owner(owner):
    owner.email = EMAIL
    owner.save()
    return owner


def _password(client, user, password=PASSWORD, url=LOGIN):
    return client.post(url, {"username": user.username, "password": password}, REMOTE_ADDR=IP)


def _key_on(html: str) -> bytes | None:
    """The authenticator key a set-up page shows, if it shows one."""
    found = re.search(r'<code class="two-step-secret">([A-Z2-7 ]+)</code>', html)
    return b32decode(found[1].replace(" ", "")) if found else None


def _code(key: bytes) -> str:
    return str(TOTP(key).token()).zfill(6)


def _code_of(device: TOTPDevice) -> str:
    return str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)


def _other(code: str) -> str:
    return "000000" if code != "000000" else "111111"


def _email_link(client) -> str:
    """Ask for the set-up link from the page; return the path the email holds."""
    response = client.post("/admin/two-step/", {"action": "email-link", "next": "/admin/"})
    assert response.status_code == 302, response.content.decode()
    return LINK.search(mail.outbox[-1].body)[1]


def _set_up(client) -> tuple[TOTPDevice, list[str]]:
    """Scan the page's key and confirm a code of it: the device and the recovery codes shown."""
    key = _key_on(client.get("/admin/two-step/").content.decode())
    assert key is not None
    shown = client.post("/admin/two-step/", {"code": _code(key)})
    assert shown.status_code == 200, shown.content.decode()
    codes = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", shown.content.decode())
    return TOTPDevice.objects.get(key=key.hex(), confirmed=True), codes


def test_a_stolen_password_cannot_set_up_an_app_before_the_owner(client, owner):
    """The attack: the password is known, the owner has no app yet. The attacker signs in,
    opens the set-up page, and confirms a code of the key it shows: before the fix the
    account was theirs, app, recovery codes and dashboard."""
    response = _password(client, owner)
    assert response["Location"] == "/admin/two-step/?next=/admin/merchants/merchant/"
    page = client.get(response["Location"])
    html = page.content.decode()
    key = _key_on(html)
    if key is not None:
        client.post("/admin/two-step/", {"code": _code(key)})

    assert not twofactor.enrolled(owner)
    assert not TOTPDevice.objects.filter(user=owner).exists()
    assert StaticToken.objects.count() == 0
    assert key is None
    assert "<title>QR code" not in html
    assert client.get("/admin/merchants/merchant/").status_code == 302
    # The page asks for proof the password does not give: a link sent to the owner's address.
    assert page.status_code == 200
    assert "a password alone does not set up two-step sign-in" in html
    assert "We email a set-up link to <strong>o*******@mama-put.example</strong>" in html
    # A code posted straight to the set-up page, as if from a key seen before, sets nothing up.
    TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=False)
    device = TOTPDevice.objects.get(user=owner)
    response = client.post("/admin/two-step/", {"code": _code_of(device)})
    assert response.status_code == 200
    assert not twofactor.enrolled(owner)


def test_asking_for_the_link_sends_it_to_the_owner_not_to_whoever_asked(client, owner):
    _password(client, owner)
    _email_link(client)
    (message,) = mail.outbox
    assert message.to == [EMAIL]
    assert message.subject == "Set up two-step sign-in to your Receco dashboard"
    assert "Someone signed in to your Receco dashboard account (olu) with its password" in message.body
    assert "If it was not you, someone knows your password: do not open the link" in message.body
    assert "within 60 minutes" in message.body
    # The attacker's session, which asked, still cannot set up anything.
    html = client.get("/admin/two-step/").content.decode()
    assert _key_on(html) is None
    assert "We sent the link to o*******@mama-put.example." in html
    # Only a digest of the link's secret is kept.
    secret = LINK.search(message.body)[1].split("key=")[1]
    assert not TwoStepLink.objects.filter(digest__contains=secret).exists()
    assert TwoStepLink.objects.get(user=owner).expires_at - timezone.now() > timedelta(minutes=59)


def test_the_owner_sets_up_the_app_with_the_emailed_link(client, owner):
    _password(client, owner)
    link = _email_link(client)
    # Opening it changes nothing until its button is pressed (a mail scanner's GET).
    page = client.get(link)
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    assert "This link sets up two-step sign-in for <strong>olu</strong>" in page.content.decode()
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None
    assert client.post(link)["Location"] == "/admin/two-step/"

    device, codes = _set_up(client)
    assert device.user == owner
    assert len(codes) == 10
    assert client.get("/admin/merchants/merchant/").status_code == 200
    # The link worked once; the proof was spent by the set-up.
    assert client.get(link).status_code == 410
    assert not TwoStepLink.objects.exists()


def test_the_link_needs_the_password_too_and_leads_back_after_it(client, owner):
    _password(client, owner)
    link = _email_link(client)
    client.logout()
    # Opened signed out (another browser, a mail scanner): the password first, then the link.
    response = client.get(link)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/?next=/admin/two-step/link/%3Fkey%3D")
    back = _password(client, owner, url=response["Location"])
    assert back["Location"] == link
    assert client.post(link)["Location"] == "/admin/two-step/"
    assert _key_on(client.get("/admin/two-step/").content.decode()) is not None


def test_the_link_of_one_user_does_nothing_for_another(client, owner, member):
    _password(client, owner)
    link = _email_link(client)
    client.logout()
    _password(client, member)
    response = client.post(link)
    assert response.status_code == 410
    assert "This set-up link has been used, has expired, or is not for mia." in response.content.decode()
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None
    assert TwoStepLink.objects.filter(user=owner).exists()  # still the owner's to use


def test_an_expired_link_or_an_earlier_one_does_not_work(client, owner):
    _password(client, owner)
    first = _email_link(client)
    second = _email_link(client)
    assert client.post(first).status_code == 410
    TwoStepLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.post(second).status_code == 410
    assert client.get("/admin/two-step/link/").status_code == 410
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None


def test_the_proof_is_this_sessions_alone(client, owner):
    """The owner's session used the link: the attacker's, with the same password, still
    cannot set up anything, even the app the owner is scanning."""
    from django.test import Client

    _password(client, owner)
    client.post(_email_link(client))
    key = _key_on(client.get("/admin/two-step/").content.decode())
    attacker = Client()
    _password(attacker, owner)
    assert _key_on(attacker.get("/admin/two-step/").content.decode()) is None
    attacker.post("/admin/two-step/", {"code": _code(key)})
    assert not twofactor.enrolled(owner)


def test_the_proof_lasts_half_an_hour(client, owner, monkeypatch):
    import time

    _password(client, owner)
    client.post(_email_link(client))
    later = time.time() + enrolment.PROOF_VALIDITY.total_seconds() + 1
    monkeypatch.setattr(time, "time", lambda: later)
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None


def test_set_up_emails_are_limited_per_user(client, owner):
    _password(client, owner)
    statuses = [client.post("/admin/two-step/", {"action": "email-link"}).status_code for _ in range(4)]
    assert statuses == [302, 302, 302, 429]
    assert len(mail.outbox) == 3


def test_a_user_without_an_email_address_is_sent_to_the_operator(client, owner):
    owner.email = ""
    owner.save()
    _password(client, owner)
    html = client.get("/admin/two-step/").content.decode()
    assert "Your account has no email address to send a set-up link to: ask your Receco operator for one." in html
    client.post("/admin/two-step/", {"action": "email-link"})
    assert mail.outbox == []


def test_the_invitation_the_user_joined_by_is_proof_in_that_browser(client, owner, merchant):
    _, token = team.invite(merchant, "ada@mama-put.example", "owner", owner)
    password = "Jollof-and-chapman-42"
    joined = client.post(f"/admin/join/{token}/", {"username": "ada", "password1": password, "password2": password})
    assert joined.status_code == 200
    ada = User.objects.get(username="ada")
    assert _password(client, ada, password)["Location"].startswith("/admin/two-step/")
    _set_up(client)
    assert twofactor.enrolled(ada)
    # Another browser with ada's password has no such proof.
    from django.test import Client

    TOTPDevice.objects.filter(user=ada).delete()
    other = Client()
    _password(other, ada, password)
    assert _key_on(other.get("/admin/two-step/").content.decode()) is None


def test_replacing_the_app_takes_a_code_from_it(client, owner):
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    old_codes = twofactor.new_recovery_codes(owner)
    _password(client, owner)
    client.post("/admin/sign-in/code/", {"code": _code_of(device)})
    page = client.get("/admin/two-step/").content.decode()
    assert "Two-step sign-in is on" in page
    assert _key_on(page) is None

    wrong = client.post("/admin/two-step/", {"action": "replace", "code": _other(_code_of(device))})
    assert "That code is not right" in wrong.content.decode()
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None

    TOTPDevice.objects.filter(pk=device.pk).update(last_t=-1)  # the code was used to sign in
    assert client.post("/admin/two-step/", {"action": "replace", "code": _code_of(device)}).status_code == 302
    page = client.get("/admin/two-step/").content.decode()
    assert "Replace your authenticator app" in page
    key = _key_on(page)
    shown = client.post("/admin/two-step/", {"code": _code(key)}).content.decode()
    new_codes = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", shown)
    assert len(new_codes) == 10
    (confirmed,) = TOTPDevice.objects.filter(user=owner)
    assert confirmed.bin_key == key  # the old app is gone
    assert twofactor.verify(owner, old_codes[0]) is None  # and its recovery codes with it
    assert "Two-step sign-in is on" in client.get("/admin/two-step/").content.decode()


def test_a_lost_phone_is_replaced_with_recovery_codes(client, owner):
    TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    codes = twofactor.new_recovery_codes(owner)
    _password(client, owner)
    client.post("/admin/sign-in/code/", {"recovery": codes[0]})
    assert client.get("/admin/").status_code == 200
    # The code that signed in is used up: replacing takes another.
    assert (
        "That code is not right"
        in client.post("/admin/two-step/", {"action": "replace", "code": codes[0]}).content.decode()
    )
    assert client.post("/admin/two-step/", {"action": "replace", "code": codes[1]}).status_code == 302
    _set_up(client)
    assert TOTPDevice.objects.filter(user=owner).count() == 1


def test_keeping_the_app_spends_the_proof(client, owner):
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    codes = twofactor.new_recovery_codes(owner)
    _password(client, owner)
    client.post("/admin/sign-in/code/", {"code": _code_of(device)})
    client.post("/admin/two-step/", {"action": "replace", "code": codes[0]})
    assert client.post("/admin/two-step/", {"action": "keep"})["Location"] == "/admin/two-step/"
    assert _key_on(client.get("/admin/two-step/").content.decode()) is None
    assert TOTPDevice.objects.filter(user=owner, confirmed=True).get() == device


def test_making_new_recovery_codes_takes_a_session_that_gave_a_code(client, owner):
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    codes = twofactor.new_recovery_codes(owner)
    _password(client, owner)
    assert client.post("/admin/two-step/", {"action": "recovery-codes"}).status_code == 302
    assert twofactor.verify(owner, codes[0]) is not None  # unchanged
    client.post("/admin/sign-in/code/", {"code": _code_of(device)})
    shown = client.post("/admin/two-step/", {"action": "recovery-codes"}).content.decode()
    assert len(re.findall(r"<li><code>([a-z2-7]{8})</code></li>", shown)) == 10
    assert twofactor.verify(owner, codes[1]) is None


def test_after_the_app_is_removed_a_password_alone_cannot_set_up_another(client, owner):
    """Re-enrolment replayed: the owner lost the phone and the operator removed the app;
    before the fix, whoever knew the password set up theirs in its place."""
    TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    TOTPDevice.objects.filter(user=owner).delete()  # the operator, for a lost phone
    _password(client, owner)
    key = _key_on(client.get("/admin/two-step/").content.decode())
    if key is not None:
        client.post("/admin/two-step/", {"code": _code(key)})
    assert not twofactor.enrolled(owner)
    assert client.get("/admin/merchants/merchant/").status_code == 302


def test_after_the_operator_resets_the_app_only_the_operators_link_sets_up_another(client, owner, capsys):
    TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    twofactor.new_recovery_codes(owner)
    call_command("setuptwostep", "olu", "--reset")
    out, err = capsys.readouterr()
    assert err == "Removed the authenticator app and recovery codes of olu.\n"
    assert not TOTPDevice.objects.filter(user=owner).exists()
    assert StaticToken.objects.count() == 0

    from django.test import Client

    attacker = Client()
    assert _password(attacker, owner)["Location"].startswith("/admin/two-step/")
    assert _key_on(attacker.get("/admin/two-step/").content.decode()) is None

    link = re.fullmatch(r"https://receipts.example.test(/admin/two-step/link/\?key=\S+)\n", out)[1]
    _password(client, owner)
    assert client.post(link)["Location"] == "/admin/two-step/"
    _set_up(client)
    assert twofactor.enrolled(owner)
    assert not TwoStepLink.objects.exists()


def test_the_operators_link_lasts_72_hours(owner, capsys):
    call_command("setuptwostep", "olu")
    link = TwoStepLink.objects.get(user=owner)
    assert timedelta(hours=71) < link.expires_at - timezone.now() <= timedelta(hours=72)


def test_setuptwostep_names_an_unknown_user(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No dashboard user named 'nobody'"):
        call_command("setuptwostep", "nobody")
