import pytest
from django.core.management import CommandError, call_command

from merchants.keys import key_digest
from merchants.models import ApiKey, Merchant
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


def test_without_a_type_it_makes_a_test_key(merchant, capsys):
    # The README's `createapikey demo-shop`: a live key is asked for by name.
    call_command("createapikey", merchant.string_id)
    assert capsys.readouterr().out.startswith("postest_")
    assert ApiKey.objects.get().type == "test"


def test_it_makes_a_test_merchant_as_its_first_sale_would(capsys):
    # A developer wants a test key before the first sale of their test- merchant.
    call_command("createapikey", "test-newshop", "--type", "test")
    key = capsys.readouterr().out.strip()
    merchant = Merchant.objects.get(string_id="test-newshop")
    assert (merchant.name, merchant.is_test, merchant.require_api_key) == ("test-newshop", True, False)
    assert admitted_key(key).merchant == merchant


def test_a_key_for_a_test_merchant_that_exists_adds_no_merchant(capsys):
    call_command("createapikey", "test-newshop", "--type", "test")
    call_command("createapikey", "test-newshop", "--type", "test")
    assert Merchant.objects.filter(string_id="test-newshop").count() == 1
    assert ApiKey.objects.filter(merchant__string_id="test-newshop").count() == 2


def test_it_refuses_a_test_merchant_id_a_sale_would_refuse():
    with pytest.raises(CommandError, match="Not a merchant id: 'test-new shop'"):
        call_command("createapikey", "test-new shop", "--type", "test")
    assert not Merchant.objects.exists()
