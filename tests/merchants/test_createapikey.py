import pytest
from django.core.management import CommandError, call_command

from merchants.keys import key_digest
from merchants.models import ApiKey
from tests.helpers import admitted_key

pytestmark = pytest.mark.django_db


def test_it_prints_the_key_alone_on_the_last_line(merchant, capsys):
    call_command("createapikey", merchant.string_id, "--type", "live", "--name", "Till 3")
    out, err = capsys.readouterr()
    key = out.splitlines()[-1]
    api_key = ApiKey.objects.get()
    assert key.startswith("poslive_")
    assert len(key) == 58
    assert out == key + "\n"
    assert api_key.digest == key_digest(key)
    assert (api_key.merchant, api_key.type, api_key.name) == (merchant, "live", "Till 3")
    assert f"Created live key {api_key.prefix} for mama-put" in err
    assert "cannot be shown again" in err
    assert admitted_key(key) == api_key


def test_it_makes_test_keys(merchant, capsys):
    call_command("createapikey", merchant.string_id, "--type", "test")
    assert capsys.readouterr().out.startswith("postest_")
    assert ApiKey.objects.get().type == "test"


def test_it_refuses_an_unknown_merchant():
    with pytest.raises(CommandError, match="No merchant with id 'nobody'"):
        call_command("createapikey", "nobody", "--type", "live")


def test_it_requires_a_type(merchant):
    with pytest.raises(CommandError, match="--type"):
        call_command("createapikey", merchant.string_id)
