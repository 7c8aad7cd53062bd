"""Signing in with a link emailed to the address: valid 15 minutes, works once."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from locker.models import SignIn
from tests.locker.conftest import EMAIL, ask

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent_to_email(shop_receipt):
    # The shop wrote the address with capitals: it is the same address.
    return shop_receipt(token="rcpt_email001_aaaaaa", short_code="MAIL01", customer_email="Ada.Obi@Example.com")


@pytest.fixture
def link(client, sent_to_email, mailoutbox, django_capture_on_commit_callbacks):
    """The customer asked for a link (typing the address in capitals), and it was emailed."""
    with django_capture_on_commit_callbacks(execute=True):
        response = ask(client, "  ADA.OBI@example.com ")
    assert response.status_code == 302
    assert response["Location"] == "/app/my/email-sent"
    [email] = [message for message in mailoutbox if message.subject == "Sign in to your receipts"]
    assert email.to == [EMAIL]
    return re.search(r"https://receipts\.example\.test(/app/my/link/\S+)", email.body)[1]


def test_the_email_page_names_the_address_masked(client, link):
    response = client.get("/app/my/email-sent")
    assert response.status_code == 200
    page = response.content.decode()
    assert (
        "If a shop sent a receipt to <strong>a*******@example.com</strong>, we have emailed it a sign-in link." in page
    )
    assert "ada.obi" not in page.lower()


def test_opening_the_link_asks_before_signing_in(client, link):
    """A mail scanner that opens the link must not spend it: only the button does."""
    response = client.get(link)
    assert response.status_code == 200
    assert "You are signing in as <strong>a*******@example.com</strong>" in response.content.decode()
    assert SignIn.objects.count() == 1
    assert "receco_locker" not in response.cookies


def test_the_link_signs_in_on_another_device(link, sent_to_email):
    """Asked on a laptop, opened on the phone the email arrived on."""
    from django.test import Client

    phone = Client()
    response = phone.post(link)
    assert response.status_code == 302
    assert response["Location"] == "/app/my"
    page = phone.get("/app/my").content.decode()
    assert sent_to_email.get_absolute_url() in page


def test_the_link_works_once(client, link):
    assert client.post(link).status_code == 302
    for again in (client.get(link), client.post(link)):
        assert again.status_code == 400
        assert "This sign-in link has expired or was already used. Ask for a new one." in again.content.decode()


def test_an_expired_link_is_refused(client, link):
    SignIn.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.post(link)
    assert response.status_code == 400
    assert "This sign-in link has expired or was already used. Ask for a new one." in response.content.decode()
    assert "receco_locker" not in response.cookies


def test_the_link_is_valid_for_15_minutes(link):
    signin = SignIn.objects.get()
    assert signin.expires_at - signin.created_at == pytest.approx(timedelta(minutes=15), abs=timedelta(seconds=2))


def test_a_forged_link_is_refused(client, link):
    forged = link[:-4] + ("0000" if not link.endswith("0000") else "1111")
    response = client.post(forged)
    assert response.status_code == 400
    assert SignIn.objects.count() == 1
