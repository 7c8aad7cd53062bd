"""Codes and links asked for are limited per client address (RECECO_LOCKER_ADDRESS_RATE)
and per number or address (RECECO_LOCKER_CONTACT_RATE), the same whether or not any
receipt was sent to the contact, and the texts the service sends by its budget
(RECECO_LOCKER_TEXT_RATE)."""

import pytest
from django.test import Client

from messaging import sms
from messaging.models import Delivery
from tests.locker.conftest import EMAIL, NOW, OTHER_PHONE, TYPED_PHONE, ask, texted_code

pytestmark = pytest.mark.django_db


def _error(response) -> str:
    return response.context["form"].errors["contact"][0]


def test_a_number_may_be_sent_3_codes_an_hour(client, two_shops):
    answers = [ask(client, TYPED_PHONE, REMOTE_ADDR=f"198.51.100.{n}") for n in range(4)]
    assert [answer.status_code for answer in answers] == [302, 302, 302, 429]
    assert _error(answers[-1]) == (
        "Too many codes asked for +234*******67: at most 3 per hour. Wait a while, then try again."
    )
    assert answers[-1]["Retry-After"] == "3590"  # the hour's window ends then
    assert ask(client, OTHER_PHONE, REMOTE_ADDR="198.51.100.9").status_code == 302


def test_the_limit_per_number_and_its_words_follow_the_setting(client, two_shops, settings):
    settings.RECECO_LOCKER_CONTACT_RATE = ["1/m"]
    assert ask(client, TYPED_PHONE).status_code == 302
    refused = ask(client, TYPED_PHONE)
    assert refused.status_code == 429
    assert (
        _error(refused) == "Too many codes asked for +234*******67: at most 1 per minute. Wait a while, then try again."
    )


def test_an_address_may_be_sent_3_links_an_hour(client, db):
    answers = [ask(client, "Ada@Example.com") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [302, 302, 302, 429]
    assert _error(answers[-1]) == (
        "Too many sign-in links asked for a*******@example.com: at most 3 per hour. Wait a while, then try again."
    )


def test_one_client_address_may_ask_20_times_an_hour(client, db):
    numbers = [f"+23480312345{n:02d}" for n in range(21)]
    answers = [ask(client, number, REMOTE_ADDR="203.0.113.7") for number in numbers]
    assert [answer.status_code for answer in answers] == [302] * 20 + [429]
    assert _error(answers[-1]) == (
        "Too many sign-in requests from your network: at most 20 per hour. Wait a while, then try again."
    )
    assert ask(client, numbers[-1], REMOTE_ADDR="203.0.113.8").status_code == 302


def test_a_contact_with_receipts_and_one_without_are_limited_alike(client, two_shops):
    unknown = "0803 000 0001"
    known = [ask(client, TYPED_PHONE).status_code for _ in range(4)]
    unknown_answers = [ask(client, unknown).status_code for _ in range(4)]
    assert known == unknown_answers == [302, 302, 302, 429]


def test_a_bad_contact_is_explained_and_not_counted(client, db):
    response = ask(client, "0803")
    assert response.status_code == 400
    assert _error(response) == "Enter a valid mobile number, like 0802 123 4567, or an email address."
    assert _error(ask(client, "ada@")) == "Enter a valid email address, like name@example.com."
    assert _error(ask(client, "  ")) == "Enter your mobile number or email address."


def test_guessing_a_number_s_codes_is_held_to_15_guesses_an_hour(client, two_shops, django_capture_on_commit_callbacks):
    """Tries and limits together: each code takes 5 wrong guesses, then is spent (even to
    the right code); a number gets 3 codes an hour, from whatever addresses they are asked."""
    guesses = []
    for n in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            assert ask(client, TYPED_PHONE, REMOTE_ADDR=f"198.51.100.{n}").status_code == 302
        code = texted_code()
        wrong = f"{(int(code) + 1) % 1_000_000:06d}"
        guesses += [client.post("/app/my/code", {"code": wrong}).status_code for _ in range(5)]
        spent = client.post("/app/my/code", {"code": code})
        assert spent.status_code == 429
        assert spent.context["form"].errors["code"] == ["Too many wrong codes. Ask for a new code."]
    assert guesses == [400, 400, 400, 400, 429] * 3
    refused = ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.77")
    assert refused.status_code == 429
    assert _error(refused) == (
        "Too many codes asked for +234*******67: at most 3 per hour. Wait a while, then try again."
    )
    assert "receco_locker" not in client.cookies


def test_a_request_refused_for_its_address_spends_nothing_of_the_number_s(
    client, two_shops, django_capture_on_commit_callbacks
):
    """Each refused request spent the number's 3 an hour and 6 a day all the same: 7 of
    them from one address locked the number out for its owner, on any address, for a day."""
    attacker = "203.0.113.66"
    for n in range(20):  # the address's hour, spent on other numbers
        assert ask(client, f"+23480312345{n:02d}", REMOTE_ADDR=attacker).status_code == 302
    refused = [ask(client, TYPED_PHONE, REMOTE_ADDR=attacker) for _ in range(7)]
    assert [answer.status_code for answer in refused] == [429] * 7
    assert {_error(answer) for answer in refused} == {
        "Too many sign-in requests from your network: at most 20 per hour. Wait a while, then try again."
    }
    owner = Client(REMOTE_ADDR="198.51.100.200")
    with django_capture_on_commit_callbacks(execute=True):
        asked = ask(owner, TYPED_PHONE)
    assert asked.status_code == 302, _error(asked)
    assert asked["Location"] == "/app/my/code"
    assert owner.post("/app/my/code", {"code": texted_code()}).status_code == 302
    assert "Sign out everywhere" in owner.get("/app/my").content.decode()


def test_sign_in_texts_are_held_to_the_service_s_budget(
    client, two_shops, settings, django_capture_on_commit_callbacks
):
    """RECECO_LOCKER_TEXT_RATE: texts the whole service sends. Asked for a number without
    receipts, nothing is sent and nothing spent; once spent, codes are refused for everyone
    (links still work), and the refusal spends nothing of the number's own budget."""
    settings.RECECO_LOCKER_TEXT_RATE = ["2/h"]
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(4):
            assert ask(client, f"0803 000 00{n:02d}", REMOTE_ADDR="198.51.100.1").status_code == 302
        assert ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.2").status_code == 302
        assert ask(client, OTHER_PHONE, REMOTE_ADDR="198.51.100.3").status_code == 302
    assert len([message for message in sms.outbox if "Receco code" in message.body]) == 2
    refused = ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.4")
    assert refused.status_code == 429
    assert _error(refused) == (
        "Too many sign-in codes sent by text just now: at most 2 per hour, for everyone. "
        "Sign in with your email address, or wait a while, then try again."
    )
    assert refused["Retry-After"] == "3590"
    assert ask(client, EMAIL, REMOTE_ADDR="198.51.100.4").status_code == 302
    # The number asked once and was refused once: two more codes fit its hour.
    settings.RECECO_LOCKER_TEXT_RATE = ["100/h"]
    assert [ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.5").status_code for _ in range(3)] == [302, 302, 429]


def test_a_text_past_the_budget_is_not_sent(client, two_shops, settings, django_capture_on_commit_callbacks):
    """Asked at once, before the outbox spent anything, both pass the form; the outbox
    sends the first and drops the second."""
    settings.RECECO_LOCKER_TEXT_RATE = ["1/h"]
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(client, TYPED_PHONE, REMOTE_ADDR="198.51.100.1").status_code == 302
        assert ask(client, OTHER_PHONE, REMOTE_ADDR="198.51.100.2").status_code == 302
    assert [message.to for message in sms.outbox if "Receco code" in message.body] == ["+2348031234567"]
    # The first delivery sent; the second dropped (deleted), never to be tried again.
    assert list(Delivery.objects.filter(channel="signin-sms").values_list("status", flat=True)) == ["sent"]


def test_the_sign_in_form_s_address_limit_is_a_page_form_s(client, db):
    """Counted as every page form's limit is (receco.lib.formlimits, django-ratelimit), not
    in admission's store, which keeps the API's limits and the budgets: one limiter a
    kind of count (docs/architecture.md)."""
    from merchants.admission.limits import windows
    from merchants.admission.store import store
    from receco.lib.rates import parse_rate

    ask(client, "ada.obi@example.com", REMOTE_ADDR="203.0.113.9")
    names = [w.count.name for w in windows("locker-address", "203.0.113.9", [parse_rate("20/h")], NOW)]
    assert store().get_many(names) == {}
    answers = [ask(client, f"ada{n}@example.com", REMOTE_ADDR="203.0.113.9").status_code for n in range(20)]
    assert answers == [302] * 19 + [429]
