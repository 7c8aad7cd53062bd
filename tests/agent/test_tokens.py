"""Receipt tokens and short codes of the agent (receco_agent.tokens).

VECTORS and SHORT_CODES are the scheme's test vectors: the service's side of the scheme
(checking a signed token's MAC with the secret it stores for the key, and that a requested
short code is its token's) must give the same values from the same inputs.
"""

import hashlib
import hmac
import re
import time

import pytest
from receco_agent.tokens import (
    DERIVED_FIRST,
    SHORT_CODE_ALPHABET,
    new_token,
    short_code_for,
    sign,
    to_base36,
    token_secret,
)

from tests.agent.support import LIVE_KEY, TEST_KEY

TOKEN = re.compile(r"rcpt_([0-9a-z]+)_([0-9a-z]{6})")
SIGNED = re.compile(r"(rcpt_[0-9a-z]+_[0-9a-z]{6})_([0-9A-Za-z]{12})([0-9a-z]{16})")

# (API key, its token secret S in hex)
SECRETS = [
    (TEST_KEY, "5730ab9259d5ca50d1b33f261f41b682543b1b3912410d962185bf5d3c59c9d5"),
    (LIVE_KEY, "25bfccbab22bc0e0a8952a18acbc90207c02166f3986e5d5c53727661ec24648"),
]
# (API key, body, signed token, its short code)
VECTORS = [
    (TEST_KEY, "rcpt_loyw3v28_abc123", "rcpt_loyw3v28_abc123_wb6xQZ7p8Nez52g3wydqegjjsawa", "33WRU6"),
    (LIVE_KEY, "rcpt_mwrjzn0u_4hisgg", "rcpt_mwrjzn0u_4hisgg_OcBSbV4vs8mj1zl6sv1xqle6ff54", "5FJXPZ"),
    (LIVE_KEY, "rcpt_0_000000", "rcpt_0_000000_OcBSbV4vs8mj27t7f0dt21r21gps", "6UNFEV"),
    # A MAC of fewer than 16 base-36 digits is left-padded with 0.
    (TEST_KEY, "rcpt_loyw3v28_00000c", "rcpt_loyw3v28_00000c_wb6xQZ7p8Nez0q3lfvav43s1pgao", "77AJ5P"),
]
# (any token, signed or not, and its short code)
SHORT_CODES = [
    ("rcpt_mwrjzn0u_4hisgg", "997CGY"),
    ("rcpt_loyw3v28_abc123", "8QQQEN"),
    ("K7P2QX", "8TCPFA"),
]


@pytest.mark.parametrize(("key", "secret"), SECRETS)
def test_the_token_secret_of_a_key(key, secret):
    assert token_secret(key).hex() == secret


@pytest.mark.parametrize(("key", "body", "token", "short_code"), VECTORS)
def test_signed_tokens_and_their_short_codes(key, body, token, short_code):
    assert sign(body, key) == token
    assert short_code_for(token) == short_code


@pytest.mark.parametrize(("token", "short_code"), SHORT_CODES)
def test_short_codes_of_unsigned_tokens(token, short_code):
    assert short_code_for(token) == short_code


def test_a_signed_token_carries_its_keys_lookup_id_and_a_mac_only_its_secret_makes():
    token = new_token(LIVE_KEY)
    body, lookup, mac = SIGNED.fullmatch(token).groups()
    assert lookup == LIVE_KEY[8:20]
    expected = hmac.new(token_secret(LIVE_KEY), f"{body}_{lookup}".encode(), hashlib.sha256).digest()[:10]
    assert int(mac, 36) == int.from_bytes(expected, "big")
    # Another key's secret does not make it, even with the lookup id copied.
    other = hmac.new(token_secret(TEST_KEY), f"{body}_{lookup}".encode(), hashlib.sha256).digest()[:10]
    assert int(mac, 36) != int.from_bytes(other, "big")
    assert sign(body, TEST_KEY) != token


def test_a_signed_token_fits_the_services_token_rules():
    token = new_token(TEST_KEY)
    assert len(token) == 49
    assert re.fullmatch(r"[A-Za-z0-9_-]{8,64}", token)


def test_without_a_key_the_token_has_the_spec_form_and_a_millisecond_timestamp():
    before = time.time_ns() // 1_000_000
    token = new_token()
    after = time.time_ns() // 1_000_000
    match = TOKEN.fullmatch(token)
    assert match, token
    assert before <= int(match.group(1), 36) <= after


def test_tokens_made_in_the_same_millisecond_differ():
    tokens = {new_token(now_ms=1_700_000_000_000) for _ in range(200)}
    assert len(tokens) == 200
    assert all(t.startswith("rcpt_loyw3v28_") for t in tokens)
    signed = {new_token(TEST_KEY, now_ms=1_700_000_000_000) for _ in range(200)}
    assert len(signed) == 200


def test_base36():
    assert to_base36(0) == "0"
    assert to_base36(35) == "z"
    assert to_base36(36) == "10"
    assert to_base36(1_700_000_000_000) == "loyw3v28"


def test_short_codes_are_a_digit_and_five_unambiguous_characters_spread_over_the_alphabet():
    codes = [short_code_for(new_token(TEST_KEY)) for _ in range(2000)]
    for code in codes:
        assert re.fullmatch(r"[2-9][A-Z0-9]{5}", code)
        assert not set(code) & set("0O1IL")
    assert {code[0] for code in codes} == set(DERIVED_FIRST)
    assert set("".join(code[1:] for code in codes)) == set(SHORT_CODE_ALPHABET)
