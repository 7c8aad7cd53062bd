"""docs/webhooks.md's receiver check, run as written against what the service sends."""

import re
import time
from datetime import timedelta
from pathlib import Path

import pytest

from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks.endpoints import roll_secret
from webhooks.signing import signature_header

pytestmark = pytest.mark.django_db

WEBHOOKS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@pytest.fixture
def verify():
    section = WEBHOOKS.read_text().split("## Requests", 1)[1]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)[1]
    assert len(snippet.splitlines()) <= 10  # "a few lines"
    namespace = {}
    exec(snippet, namespace)  # noqa: S102 (our own docs)
    return namespace["verify"]


def test_it_accepts_what_the_service_sends(verify, sent, endpoint, merchant, sale, receiver):
    sent(create_receipt, merchant, validate_sale(sale))
    (request,) = receiver.requests
    assert verify(endpoint.secret, request["body"], request["headers"]["Receco-Signature"]) is True


def test_it_accepts_the_new_secret_and_the_old_one_during_a_roll(verify, sent, endpoint, merchant, sale, receiver):
    old = endpoint.secret
    new = roll_secret(endpoint, timedelta(hours=1))
    sent(create_receipt, merchant, validate_sale(sale))
    (request,) = receiver.requests
    header = request["headers"]["Receco-Signature"]
    assert verify(new, request["body"], header) is True
    assert verify(old, request["body"], header) is True
    assert verify("whsec_someone_else", request["body"], header) is False


def test_it_refuses_a_changed_body_and_an_old_timestamp(verify):
    body = b'{"id":"evt_1"}'
    now = int(time.time())
    assert verify("whsec_a", body, signature_header(["whsec_a"], now, body)) is True
    assert verify("whsec_a", body + b" ", signature_header(["whsec_a"], now, body)) is False
    assert verify("whsec_a", body, signature_header(["whsec_a"], now - 301, body)) is False
    assert verify("whsec_a", body, signature_header(["whsec_a"], now - 299, body)) is True
