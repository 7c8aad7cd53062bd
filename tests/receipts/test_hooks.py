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
