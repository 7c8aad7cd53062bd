"""The registry of the writer's hooks (receipts.hooks): a hook registered hears every
change it wants, and none once unregistered."""

import pytest

from merchants.models import Merchant
from receipts import hooks
from receipts.models import Receipt


class Listener(hooks.Hook):
    name = "listener"
    told = frozenset({"created"})

    def wants(self, change):
        return True


@pytest.mark.django_db
def test_a_hook_unregistered_is_run_no_more():
    change = hooks.Change(kind="created", receipt=Receipt(), merchant=Merchant())
    listener = Listener()
    hooks.register(listener)
    try:
        assert hooks.wanting(change)[-1] is listener
    finally:
        hooks.unregister("listener")
    assert [hook.name for hook in hooks.wanting(change)].count("listener") == 0


class Counting(hooks.Hook):
    """Wants every sale, and counts what it is asked."""

    name = "counting"

    def __init__(self):
        self.asked, self.written = [], []

    def wants(self, change):
        self.asked.append(change.receipt.pk)
        return True

    def write(self, change):
        self.written.append(change.receipt.pk)
        return change.receipt.number


@pytest.fixture
def counting():
    hook = Counting()
    hooks.register(hook)
    yield hook
    hooks.unregister("counting")


@pytest.mark.django_db(transaction=True)  # the sale's own transaction, as a request makes it
def test_a_sale_asks_each_hook_once_before_it_is_stored_and_has_it_write_once_after(counting, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    written = create_receipt(merchant, validate_sale(sale), keyed=True)
    assert counting.asked == [None]  # once, before the INSERT
    assert counting.written == [written.receipt.pk]  # once, in its transaction
    assert written.outcomes["counting"] == written.receipt.number
