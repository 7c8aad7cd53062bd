"""Signatures: docs/webhooks.md's receiver check accepts what the service sends, with both secrets during a roll."""

import re
from datetime import timedelta

import pytest

from webhooks.endpoints import roll_secret
from webhooks.models import Endpoint
from webhooks.signing import new_secret, signature, signature_header

pytestmark = pytest.mark.django_db


def test_a_secret_is_whsec_and_43_url_safe_characters():
    assert re.fullmatch(r"whsec_[A-Za-z0-9_-]{43}", new_secret())
    assert new_secret() != new_secret()


def test_the_signature_is_the_hmac_sha256_of_the_timestamp_dot_body():
    # Computed independently: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    assert signature("whsec_test", 1700000000, b'{"a":1}') == (
        "38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789"
    )


def test_the_header_has_one_v1_per_secret():
    header = signature_header(["whsec_a", "whsec_b"], 1700000000, b"{}")
    assert header == (
        f"t=1700000000,v1={signature('whsec_a', 1700000000, b'{}')},v1={signature('whsec_b', 1700000000, b'{}')}"
    )


def test_during_a_roll_both_secrets_sign_then_only_the_new_one(endpoint):
    old = endpoint.secret
    new = roll_secret(endpoint, timedelta(hours=24))
    endpoint = Endpoint.objects.get(pk=endpoint.pk)
    assert endpoint.signing_secrets() == [new, old]
    assert endpoint.signing_secrets(now=endpoint.previous_secret_expires_at + timedelta(seconds=1)) == [new]


def test_a_roll_without_grace_stops_the_old_secret_now(endpoint):
    new = roll_secret(endpoint, timedelta(0))
    assert Endpoint.objects.get(pk=endpoint.pk).signing_secrets() == [new]
