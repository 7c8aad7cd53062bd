import re
import time

from receco_agent.tokens import (
    SHORT_CODE_ALPHABET,
    new_short_code,
    new_token,
    to_base36,
)

TOKEN = re.compile(r"rcpt_([0-9a-z]+)_([0-9a-z]{6})")


def test_token_has_the_spec_form_and_a_millisecond_timestamp():
    before = time.time_ns() // 1_000_000
    token = new_token()
    after = time.time_ns() // 1_000_000
    match = TOKEN.fullmatch(token)
    assert match, token
    assert before <= int(match.group(1), 36) <= after


def test_token_fits_the_services_token_rules():
    token = new_token()
    assert 8 <= len(token) <= 64
    assert re.fullmatch(r"[A-Za-z0-9_-]+", token)


def test_tokens_made_in_the_same_millisecond_differ():
    tokens = {new_token(now_ms=1_700_000_000_000) for _ in range(200)}
    assert len(tokens) == 200
    assert all(t.startswith("rcpt_loyw3v28_") for t in tokens)


def test_base36():
    assert to_base36(0) == "0"
    assert to_base36(35) == "z"
    assert to_base36(36) == "10"
    assert to_base36(1_700_000_000_000) == "loyw3v28"


def test_short_code_is_six_unambiguous_uppercase_characters():
    codes = [new_short_code() for _ in range(500)]
    for code in codes:
        assert re.fullmatch(r"[A-Z0-9]{6}", code)
        assert not set(code) & set("0O1IL")
    assert set("".join(codes)) <= set(SHORT_CODE_ALPHABET)
    assert len(set(codes)) == 500
