"""Nothing the locker answers before proof tells whether any receipt was sent to a contact:
the same statuses, pages and database work for both; the outbox alone decides to send.
No contact reaches the logs, and none is kept once a sign-in is over."""

import logging
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from locker import signins
from locker.models import SignIn
from messaging import sms
from messaging.models import Delivery
from tests.locker.conftest import PHONE, ask

pytestmark = pytest.mark.django_db

# No receipt was ever sent to it; masked, it reads as PHONE does (+234*******67).
UNKNOWN = "+2348059876567"


def _csrf_free(html: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)


def _shape(sql: str) -> str:
    """A statement with its values left out."""
    return re.sub(r"'[^']*'|\d+", "?", sql)


def _asking(contact: str):
    browser = Client()
    with CaptureQueriesContext(connection) as queries:
        response = ask(browser, contact)
    return browser, response, [_shape(query["sql"]) for query in queries]


def test_asking_for_a_code_answers_and_works_alike(two_shops):
    known_browser, known, known_queries = _asking(PHONE)
    unknown_browser, unknown, unknown_queries = _asking(UNKNOWN)
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"]) == (302, "/app/my/code")
    assert known_queries == unknown_queries
    # The sign-in and its delivery are written for both; no receipt is read for either.
    assert [q.split(" (")[0] for q in known_queries if q.startswith("INSERT")] == [
        'INSERT INTO "locker_signin"',
        'INSERT INTO "messaging_delivery"',
    ]
    assert not [q for q in known_queries if "receipts_receipt" in q]
    pages = [_csrf_free(browser.get("/app/my/code").content.decode()) for browser in (known_browser, unknown_browser)]
    assert pages[0] == pages[1]


def test_asking_for_a_link_answers_alike(two_shops):
    known_browser, known, known_queries = _asking("ada.obi@example.com")
    unknown_browser, unknown, unknown_queries = _asking("ada.ode@example.com")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known_queries == unknown_queries
    pages = [browser.get("/app/my/email-sent").content.decode() for browser in (known_browser, unknown_browser)]
    assert pages[0] == pages[1]


def test_the_outbox_sends_no_code_to_a_number_without_receipts(client, two_shops, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        ask(client, UNKNOWN)
    assert [message for message in sms.outbox if message.to == UNKNOWN] == []
    signin = SignIn.objects.get()
    assert signin.contact == ""  # forgotten at once
    assert not Delivery.objects.filter(channel="signin-sms").exists()
    # Even its own code is refused, as a wrong one is: the answer tells nothing.
    response = client.post("/app/my/code", {"code": signins.code_of(signin)})
    assert response.status_code == 400
    assert response.context["form"].errors["code"] == ["That code is not right. 4 tries left."]


def test_no_contact_in_the_logs_nor_in_the_outbox(client, two_shops, signed_in, caplog):
    caplog.set_level(logging.DEBUG)
    signed_in(client)
    client.post("/app/my/sign-out-everywhere")
    unknown = Client()
    ask(unknown, UNKNOWN)
    for form in (PHONE, PHONE.lstrip("+"), "8031234567", UNKNOWN, UNKNOWN.lstrip("+")):
        assert form not in caplog.text
    # The sign-in deliveries name their sign-in, never the number.
    destinations = set(Delivery.objects.filter(channel="signin-sms").values_list("destination", flat=True))
    assert all(destination.isdigit() for destination in destinations)
    # The sign-in that succeeded is gone, its contact with it.
    assert not SignIn.objects.filter(contact=PHONE).exists()


def test_expired_sign_ins_are_purged_with_their_contacts(client, two_shops):
    from datetime import timedelta

    from django.utils import timezone

    ask(client, UNKNOWN)
    SignIn.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    ask(Client(), PHONE)
    assert list(SignIn.objects.values_list("contact", flat=True)) == [PHONE]
