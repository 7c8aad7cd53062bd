"""Signing in with a code texted to the number: valid once, for 10 minutes, 5 tries."""

from datetime import timedelta

import pytest
from django.utils import timezone

from locker.models import SignIn
from messaging import sms
from tests.locker.conftest import PHONE, TYPED_PHONE, ask, texted_code

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(client, two_shops, django_capture_on_commit_callbacks):
    """The customer asked for a code for their number, and it was texted."""
    with django_capture_on_commit_callbacks(execute=True):
        response = ask(client, TYPED_PHONE)
    assert response.status_code == 302
    assert response["Location"] == "/app/my/code"
    return texted_code()


def _type(client, code):
    return client.post("/app/my/code", {"code": code})


def _wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def test_the_code_is_texted_to_the_number(client, asked):
    [text] = [message for message in sms.outbox if "Receco code" in message.body]
    assert text.to == PHONE
    assert text.body == (
        f"{asked} is your Receco code to see your receipts. Valid 10 minutes. Never share it.\n\n"
        f"@receipts.example.test #{asked}"
    )


def test_the_text_is_one_part_of_the_gsm_alphabet(asked, settings):
    from locker.models import SignIn
    from locker.transport import sms_text
    from receipts import gsm

    [text] = [message.body for message in sms.outbox if "Receco code" in message.body]
    assert gsm.septets(text) == len(text) == 114
    # The site's host is the one part that varies: one of 60 characters still fits.
    host = "receipts-of-a-rather-long-name.digital-receipts-operators.ng"
    assert len(host) == 60
    settings.RECECO_WEB_URL = f"https://{host}"
    assert gsm.septets(sms_text(SignIn.objects.get())) <= gsm.PART


def test_the_page_asks_for_the_code_naming_the_number_masked(client, asked):
    response = client.get("/app/my/code")
    assert response.status_code == 200
    page = response.content.decode()
    assert "If a shop sent a receipt to <strong>+234*******67</strong>, we have texted it a 6-digit code." in page
    assert PHONE not in page
    assert "0803" not in page


def test_the_right_code_signs_in_for_30_days(client, asked):
    response = _type(client, asked)
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    cookie = response.cookies["receco_locker"]
    assert cookie["max-age"] == 30 * 86400
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/app/my"
    page = client.get("/app/my")
    assert page.status_code == 200
    assert "Sent to <strong>+234*******67</strong>" in page.content.decode()


def test_the_cookie_is_secure_on_an_https_site(client, asked, settings):
    settings.SESSION_COOKIE_SECURE = True
    assert _type(client, asked).cookies["receco_locker"]["secure"] is True


def test_a_code_with_spaces_is_read(client, asked):
    assert _type(client, f" {asked[:3]} {asked[3:]} ").status_code == 302


def test_a_wrong_code_says_how_many_tries_are_left(client, asked):
    response = _type(client, _wrong(asked))
    assert response.status_code == 400
    assert response.context["form"].errors["code"] == ["That code is not right. 4 tries left."]
    assert "receco_locker" not in response.cookies


def test_something_not_a_code_costs_no_try(client, asked):
    response = _type(client, "12345")
    assert response.status_code == 400
    assert response.context["form"].errors["code"] == ["Enter the 6-digit code from the text message."]
    assert SignIn.objects.get().tries == 0


def test_five_wrong_codes_spend_the_code(client, asked):
    answers = [_type(client, _wrong(asked)) for _ in range(5)]
    assert [answer.status_code for answer in answers] == [400, 400, 400, 400, 429]
    assert [answer.context["form"].errors["code"][0] for answer in answers] == [
        "That code is not right. 4 tries left.",
        "That code is not right. 3 tries left.",
        "That code is not right. 2 tries left.",
        "That code is not right. 1 try left.",
        "Too many wrong codes. Ask for a new code.",
    ]
    right = _type(client, asked)
    assert right.status_code == 429
    assert right.context["form"].errors["code"] == ["Too many wrong codes. Ask for a new code."]
    assert "receco_locker" not in right.cookies


def test_an_expired_code_is_refused(client, asked):
    SignIn.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = _type(client, asked)
    assert response.status_code == 400
    assert response.context["form"].errors["code"] == ["This code has expired or was already used. Ask for a new code."]


def test_the_code_is_valid_for_10_minutes(client, asked):
    signin = SignIn.objects.get()
    assert signin.expires_at - signin.created_at == pytest.approx(timedelta(minutes=10), abs=timedelta(seconds=2))


def test_a_code_works_once(client, asked):
    other_browser = client.__class__()
    other_browser.cookies.update(client.cookies)  # the same waiting sign-in, replayed
    assert _type(client, asked).status_code == 302
    again = _type(other_browser, asked)
    assert again.status_code == 400
    assert again.context["form"].errors["code"] == ["This code has expired or was already used. Ask for a new code."]
    assert SignIn.objects.count() == 0  # the contact went with it


def test_the_code_page_without_a_code_asked_for_leads_to_the_start(client, db):
    response = client.get("/app/my/code")
    assert response.status_code == 302
    assert response["Location"] == "/app/my"


def test_the_code_is_never_stored(client, asked):
    signin = SignIn.objects.get()
    assert asked not in {signin.nonce, signin.contact, str(signin.pk)}


def test_a_new_code_retires_the_old_ones(client, asked, django_capture_on_commit_callbacks):
    """Asking again left every earlier code live: each could still sign in."""
    first_browser = client.__class__()
    first_browser.cookies.update(client.cookies)  # waits for the first code
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.2").status_code == 302
    newest = texted_code()
    assert newest != asked
    refused = _type(first_browser, asked)
    assert refused.status_code == 400
    assert refused.context["form"].errors["code"] == ["This code has expired or was already used. Ask for a new code."]
    assert "receco_locker" not in refused.cookies
    assert SignIn.objects.count() == 1
    assert _type(client, newest).status_code == 302


def test_a_new_link_retires_the_old_ones(client, shop_receipt, mailoutbox, django_capture_on_commit_callbacks):
    import re

    shop_receipt(token="rcpt_email001_aaaaaa", short_code="MAIL01", customer_email="ada.obi@example.com")
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            ask(client, "ada.obi@example.com")
    links = [message.body for message in mailoutbox if message.subject == "Sign in to your receipts"]
    first, second = (re.search(r"(/app/my/link/\S+)", body)[1] for body in links)
    assert "This sign-in link has expired or was already used." in client.post(first).content.decode()
    assert client.post(second).status_code == 302
