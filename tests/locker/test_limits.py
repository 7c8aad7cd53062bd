"""Codes and links asked for are limited per number or address (RECECO_LOCKER_CONTACT_RATE)
and per client address (RECECO_LOCKER_ADDRESS_RATE), the same whether or not any receipt
was sent to the contact."""

import pytest

from tests.locker.conftest import OTHER_PHONE, TYPED_PHONE, ask, texted_code

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
