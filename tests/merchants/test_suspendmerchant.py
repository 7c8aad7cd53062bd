import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_it_suspends_a_merchant(merchant, capsys):
    call_command("suspendmerchant", merchant.string_id)
    merchant.refresh_from_db()
    assert merchant.is_suspended
    assert capsys.readouterr().out == "mama-put is now suspended\n"


def test_undo_reactivates_it(merchant, capsys):
    merchant.set_suspended(True)
    call_command("suspendmerchant", merchant.string_id, "--undo")
    merchant.refresh_from_db()
    assert not merchant.is_suspended
    assert capsys.readouterr().out == "mama-put is now active\n"


def test_it_says_when_nothing_changed(merchant, capsys):
    call_command("suspendmerchant", merchant.string_id, "--undo")
    assert capsys.readouterr().out == "mama-put is already active\n"


def test_it_refuses_an_unknown_merchant(db):
    with pytest.raises(CommandError, match="No merchant with id 'nobody'"):
        call_command("suspendmerchant", "nobody")
