"""Two-step sign-in to the dashboard (dashboard.twofactor, dashboard.signin_views):
issue 21's "no second factor" replayed, with the attacks on the second step."""

import re

import pytest
from django.core import mail
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from dashboard import twofactor

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/merchants/merchant/"
PASSWORD = "not-used-in-tests"
IP = "203.0.113.7"


@pytest.fixture(autouse=True)
def required(settings):
    settings.RECECO_DASHBOARD_REQUIRE_2FA = True


def _password(client, user, password=PASSWORD):
    return client.post(LOGIN, {"username": user.username, "password": password}, REMOTE_ADDR=IP)


def _code(client, code, next_url="/admin/merchants/merchant/"):
    return client.post(f"/admin/sign-in/code/?next={next_url}", {"code": code}, REMOTE_ADDR=IP)


def _now(device) -> str:
    return str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)


def _authenticator(user) -> TOTPDevice:
    return TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=True)


def _emailed_link(client, user) -> None:
    """The proof a password alone does not give (dashboard.enrolment): the set-up link
    emailed to the user, opened and used in this session."""
    user.email = "olu@mama-put.example"
    user.save()
    client.post("/admin/two-step/", {"action": "email-link"})
    link = re.search(r"https?://[^/\s]+(/admin/two-step/link/\?key=\S+)", mail.outbox[-1].body)[1]
    assert client.post(link)["Location"] == "/admin/two-step/"


def test_an_owner_without_an_app_is_sent_to_set_one_up_and_reaches_nothing_else(client, owner):
    response = _password(client, owner)
    assert response.status_code == 302
    assert response["Location"] == "/admin/two-step/?next=/admin/merchants/merchant/"
    for url in ["/admin/", "/admin/merchants/merchant/", "/admin/receipts/receipt/", "/admin/merchants/apikey/"]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url
    # The sign-in page sends the half-signed-in session on, not back to the password.
    assert client.get("/admin/login/")["Location"] == "/admin/two-step/?next=/admin/"


def test_setting_up_shows_a_qr_code_confirms_a_code_and_shows_recovery_codes_once(client, owner):
    _password(client, owner)
    _emailed_link(client, owner)
    page = client.get("/admin/two-step/?next=/admin/merchants/merchant/")
    assert page.status_code == 200
    assert page["Cache-Control"].startswith("no-store")
    html = page.content.decode()
    assert "<title>QR code to scan with your authenticator app</title>" in html
    device = TOTPDevice.objects.get(user=owner)
    assert device.confirmed is False
    assert "Receco" in device.config_url
    # Reloading shows the same key, as the one already scanned.
    assert "<title>QR code" in client.get("/admin/two-step/").content.decode()
    assert TOTPDevice.objects.get(user=owner).key == device.key

    wrong = client.post("/admin/two-step/", {"code": "000000" if _now(device) != "000000" else "111111"})
    assert "That code is not right" in wrong.content.decode()
    TOTPDevice.objects.filter(pk=device.pk).update(throttling_failure_count=0)

    shown = client.post("/admin/two-step/?next=/admin/merchants/merchant/", {"code": _now(device)})
    assert shown.status_code == 200
    assert shown["Cache-Control"].startswith("no-store")
    codes = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", shown.content.decode())
    assert len(codes) == 10
    assert len(set(codes)) == 10
    # Kept only as digests.
    stored = set(StaticToken.objects.filter(device__user=owner).values_list("token", flat=True))
    assert len(stored) == 10
    assert not stored & set(codes)
    assert TOTPDevice.objects.get(pk=device.pk).confirmed is True
    # This session gave a code: the dashboard opens.
    assert client.get("/admin/merchants/merchant/").status_code == 200
    # The page now says it is on, and shows no codes again.
    html = client.get("/admin/two-step/").content.decode()
    assert "Two-step sign-in is on" in html
    assert codes[0] not in html


def test_an_owner_with_an_app_gives_a_code_after_the_password(client, owner, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    device = _authenticator(owner)
    response = _password(client, owner)
    assert response["Location"] == "/admin/sign-in/code/?next=/admin/merchants/merchant/"
    page = client.get(response["Location"])
    assert "Sign in: step 2" in page.content.decode()
    assert client.get("/admin/").status_code == 302

    wrong = _code(client, "12345" if _now(device) != "012345" else "54321")
    assert wrong.status_code == 200
    assert "That code is not right" in wrong.content.decode()
    assert client.get("/admin/").status_code == 302

    right = _code(client, _now(device)[:3] + " " + _now(device)[3:])
    assert right.status_code == 302
    assert right["Location"] == "/admin/merchants/merchant/"
    assert client.get("/admin/merchants/merchant/").status_code == 200


def test_a_code_works_once(client, owner, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    device = _authenticator(owner)
    _password(client, owner)
    code = _now(device)
    assert _code(client, code).status_code == 302
    client.logout()
    _password(client, owner)
    again = _code(client, code)
    assert again.status_code == 200
    assert _errors(again) == [
        "That code was used already: each code works once. Wait for the app's next code "
        "(a new one every 30 seconds), then type it."
    ]
    assert client.get("/admin/").status_code == 302


def _errors(response) -> list[str]:
    return response.context["form"].errors["code"]


def test_a_recovery_code_signs_in_once(client, owner, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    settings.OTP_STATIC_THROTTLE_FACTOR = 0
    _authenticator(owner)
    codes = twofactor.new_recovery_codes(owner)
    _password(client, owner)
    assert _code(client, codes[3].upper()).status_code == 302
    assert twofactor.recovery_codes_left(owner) == 9
    client.logout()
    _password(client, owner)
    assert "That code is not right" in _code(client, codes[3]).content.decode()


def test_an_open_redirect_is_refused_after_the_code(client, owner, settings):
    device = _authenticator(owner)
    _password(client, owner)
    response = _code(client, _now(device), next_url="https://evil.example/")
    assert response["Location"] == "/admin/"


def test_the_right_code_straight_after_a_wrong_one_signs_in(client, owner):
    device = _authenticator(owner)
    _password(client, owner)
    wrong = "000000" if _now(device) != "000000" else "111111"
    assert _errors(_code(client, wrong)) == [
        "That code is not right. Check the app shows Receco and try the newest code."
    ]

    right = _code(client, _now(device))  # within django-otp's pause of a second after the wrong one

    assert right.status_code == 302
    assert right["Location"] == "/admin/merchants/merchant/"


def test_wrong_codes_in_a_row_must_wait(client, owner):
    device = _authenticator(owner)
    _password(client, owner)
    wrong = "000000" if _now(device) != "000000" else "111111"
    _code(client, wrong)
    assert _errors(_code(client, wrong)) == [
        "That code is not right. Check the app shows Receco and try the newest code."
    ]

    response = _code(client, _now(device))

    assert _errors(response) == ["2 wrong codes in a row: wait 2 seconds, then try again."]
    assert client.get("/admin/").status_code == 302
    device.refresh_from_db()
    assert device.throttling_failure_count == 2  # the code refused unchecked does not count


def test_the_wait_is_said_in_whole_seconds_with_its_own_plural():
    from datetime import timedelta

    from django.utils import timezone

    soon = twofactor.TooManyCodes(timezone.now() + timedelta(milliseconds=500), 2)
    later = twofactor.TooManyCodes(timezone.now() + timedelta(seconds=7, milliseconds=500), 4)

    assert soon.message == "2 wrong codes in a row: wait 1 second, then try again."
    assert later.message == "4 wrong codes in a row: wait 8 seconds, then try again."


def test_the_second_step_buttons_look_like_every_other_button(client, owner):
    _authenticator(owner)
    _password(client, owner)
    page = client.get("/admin/sign-in/code/").content.decode()
    assert '<button type="submit" class="button sign-in-button">Sign in</button>' in page
    assert '<button type="submit" class="button sign-in-button">Use the recovery code</button>' in page


def test_wrong_codes_lock_the_user_out_as_wrong_passwords_do(client, owner, settings):
    """A stolen password must not let anyone guess codes at leisure: django-axes counts them."""
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    device = _authenticator(owner)
    _password(client, owner)
    wrong = "000000" if _now(device) != "000000" else "111111"
    statuses = [_code(client, wrong).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 200, 429]
    # The half-signed-in session is over, and the password is refused from there for the pause.
    assert "_auth_user_id" not in client.session
    assert _password(client, owner).status_code == 429


def test_a_half_signed_in_session_cannot_replace_the_app(client, owner):
    device = _authenticator(owner)
    _password(client, owner)
    response = client.get("/admin/two-step/")
    assert response["Location"] == "/admin/sign-in/code/?next=/admin/"
    response = client.post("/admin/two-step/", {"action": "recovery-codes"})
    assert response.status_code == 302
    assert TOTPDevice.objects.filter(user=owner).count() == 1
    assert TOTPDevice.objects.get(user=owner).key == device.key
    assert StaticToken.objects.count() == 0


def test_signing_out_works_between_the_steps(client, owner):
    _authenticator(owner)
    _password(client, owner)
    assert client.post("/admin/logout/").status_code == 200
    assert "_auth_user_id" not in client.session


def test_the_operator_is_asked_too(client, db):
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", password=PASSWORD)
    response = client.post(LOGIN, {"username": "root", "password": PASSWORD}, REMOTE_ADDR=IP)
    assert response["Location"] == "/admin/two-step/?next=/admin/merchants/merchant/"


def test_a_member_is_not_required_to_but_is_asked_once_set_up(client, member):
    response = _password(client, member)
    assert response["Location"] == "/admin/merchants/merchant/"
    assert client.get("/admin/merchants/merchant/").status_code == 200
    client.logout()
    _authenticator(member)
    assert _password(client, member)["Location"] == "/admin/sign-in/code/?next=/admin/merchants/merchant/"


def test_the_setting_turns_the_requirement_off(client, owner, settings):
    settings.RECECO_DASHBOARD_REQUIRE_2FA = False
    assert _password(client, owner)["Location"] == "/admin/merchants/merchant/"
    assert client.get("/admin/merchants/merchant/").status_code == 200


def test_the_requirement_is_on_by_default_outside_debug():
    import subprocess
    import sys

    script = "from django.conf import settings; print(settings.RECECO_DASHBOARD_REQUIRE_2FA)"
    env = {
        "DJANGO_SETTINGS_MODULE": "receco.settings",
        "DJANGO_SECRET_KEY": "x" * 50,
        "RECECO_LOCAL_CACHE": "1",
        "PATH": "/usr/bin:/bin",
    }
    run = [sys.executable, "-c", f"import django; django.setup(); {script}"]
    assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.strip() == "True"
    debug = {**env, "DJANGO_DEBUG": "1"}
    assert subprocess.run(run, env=debug, capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_the_sign_in_page_says_sign_in_everywhere(client, db):
    html = client.get("/admin/login/").content.decode()
    assert "<h1>Sign in</h1>" in html
    assert '<button type="submit" class="button sign-in-button">Sign in</button>' in html
    assert "Log in" not in html
    assert "log in" not in html
    assert '<a href="/admin/password-reset/">Forgotten your password?</a>' in html


def test_a_forgotten_password_is_reset_by_email_with_our_name(client, owner, settings):
    owner.email = "olu@mama-put.example"
    owner.save()
    response = client.post("/admin/password-reset/", {"email": "olu@mama-put.example"}, REMOTE_ADDR=IP)
    assert response.status_code == 302
    assert response["Location"] == "/admin/password-reset/sent/"
    (message,) = mail.outbox
    assert message.subject == "Set a new password for your Receco dashboard"
    assert message.to == ["olu@mama-put.example"]
    assert "your Receco dashboard account (olu)" in message.body
    link = re.search(r"https?://[^/]+(/admin/password-reset/[^/]+/[^/]+/)", message.body)[1]
    form = client.get(link, follow=True)
    assert form.status_code == 200
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": "A-new-long-pass-42", "new_password2": "A-new-long-pass-42"}
    )
    assert done["Location"] == "/admin/password-reset/done/"
    assert "Sign in" in client.get(done["Location"]).content.decode()
    # The link works once.
    assert "new_password1" not in client.get(link, follow=True).content.decode()
    # The new password still leads to the second step, not to the dashboard.
    response = client.post(LOGIN, {"username": "olu", "password": "A-new-long-pass-42"}, REMOTE_ADDR=IP)
    assert response["Location"].startswith("/admin/two-step/")


def test_an_unknown_address_gets_the_same_answer_and_no_email(client, db):
    response = client.post("/admin/password-reset/", {"email": "nobody@example.com"}, REMOTE_ADDR=IP)
    assert response["Location"] == "/admin/password-reset/sent/"
    assert mail.outbox == []


def test_reset_emails_are_limited_per_address(client, owner, settings):
    settings.RECECO_PASSWORD_RESET_RATE = "2/h"
    owner.email = "olu@mama-put.example"
    owner.save()
    statuses = [
        client.post("/admin/password-reset/", {"email": owner.email}, REMOTE_ADDR="198.51.100.9").status_code
        for _ in range(3)
    ]
    assert statuses == [302, 302, 429]
    assert len(mail.outbox) == 2
