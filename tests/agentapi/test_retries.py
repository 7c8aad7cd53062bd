"""A POS that retries: the token it sends is the sale's idempotency key (docs/api.md)."""

import pytest
from django.db import OperationalError, transaction
from django.db.models.signals import post_save

from receipts.models import Receipt
from tests.helpers import error_envelope

PATH = "createReceiptFromPOS"


@pytest.fixture
def failing_after_commit():
    """The database stops answering right after a sale's transaction committed: the sale is
    stored but its caller is answered 503, as during a stall."""

    def lost():
        raise OperationalError("server closed the connection unexpectedly")

    def stall(sender, instance, created, **kwargs):
        transaction.on_commit(lost)  # not robust: raises to the writer once committed

    post_save.connect(stall, sender=Receipt, dispatch_uid="test-stall-after-commit")
    yield
    post_save.disconnect(sender=Receipt, dispatch_uid="test-stall-after-commit")


@pytest.mark.django_db(transaction=True)
def test_a_retry_of_a_sale_stored_before_a_503_answers_the_stored_receipt(api, sale, failing_after_commit):
    status, body = api.post(PATH, sale)
    assert status == 503
    assert body == error_envelope(
        503, "SERVICE_UNAVAILABLE", "The database is not answering; try again in a few seconds", PATH
    )
    assert Receipt.objects.filter(token=sale["token"]).count() == 1  # stored all the same
    post_save.disconnect(sender=Receipt, dispatch_uid="test-stall-after-commit")  # the database is back

    status, body = api.post(PATH, sale)
    assert status == 200, body
    stored = Receipt.objects.get(token=sale["token"])
    assert body["result"]["data"]["id"] == stored.pk
    assert body["result"]["data"]["short_code"] == stored.short_code
    assert Receipt.objects.count() == 1
