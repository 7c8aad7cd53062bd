"""Erasure leaves nothing personal in the logs: erasing, detaching and retention log the
kind of contact and the counts, never the contact (every logger at DEBUG, as production
formats them: tests/ops/test_log_privacy.py drives the rest of the service so)."""

import re

import pytest

from messaging import sms
from privacy import retention
from privacy.erasure import erase_contact
from tests.ops.test_log_privacy import every_line  # noqa: F401 (the fixture)
from tests.privacy.conftest import EMAIL, OTHER_EMAIL, OTHER_PHONE, PHONE, followed, variants

pytestmark = pytest.mark.django_db


def test_no_line_of_an_erasure_holds_a_contact(client, customer_receipts, every_line):  # noqa: F811
    (ours, _), theirs = customer_receipts
    text = next(message.body for message in sms.outbox if "OTHER3" in message.body)
    path, _, key = followed(re.search(r"Not yours\? (\S+)", text)[1]).partition("?k=")
    every_line.clear()

    assert client.post(path, {"k": key}).status_code == 200
    erase_contact(PHONE, via="locker")
    erase_contact(EMAIL.lower(), via="operator")
    retention.apply()

    logged = "\n".join(every_line)
    assert "phone erased (via link): 1 receipts, 1 deliveries, 1 webhook_events" in logged
    assert "phone erased (via locker): 2 receipts, 2 deliveries, 2 webhook_events" in logged
    assert [variant for variant in variants(PHONE, EMAIL, OTHER_PHONE, OTHER_EMAIL) if variant in logged] == []
    assert key not in logged
    assert key.rpartition(":")[2] not in logged
