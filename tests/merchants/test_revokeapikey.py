import pytest
from django.core.management import CommandError, call_command

from receco.errors import Unauthorized
from tests.helpers import admitted_key

pytestmark = pytest.mark.django_db


def test_it_revokes_by_full_key(live_key, capsys):
    call_command("revokeapikey", live_key.key)
    assert capsys.readouterr().out == f"Revoked {live_key.api_key.prefix} of mama-put\n"
    with pytest.raises(Unauthorized, match="API key has been revoked"):
        admitted_key(live_key.key)


def test_it_revokes_by_prefix(live_key, capsys):
    call_command("revokeapikey", live_key.api_key.prefix)
    live_key.api_key.refresh_from_db()
    assert live_key.api_key.revoked_at is not None


def test_revoking_twice_says_so(live_key, capsys):
    call_command("revokeapikey", live_key.api_key.prefix)
    call_command("revokeapikey", live_key.api_key.prefix)
    assert capsys.readouterr().out.splitlines()[-1] == f"{live_key.api_key.prefix} of mama-put was already revoked"


def test_a_prefix_of_the_wrong_type_is_not_found(live_key):
    with pytest.raises(CommandError, match="No such API key"):
        call_command("revokeapikey", live_key.api_key.prefix.replace("poslive_", "postest_"))
