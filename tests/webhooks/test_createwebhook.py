import pytest
from django.core.management import CommandError, call_command

from webhooks.models import Endpoint

pytestmark = pytest.mark.django_db


def test_it_prints_the_secret_alone_on_the_last_line(merchant, capsys):
    call_command("createwebhook", merchant.string_id, "https://erp.example.com/receco", "--description", "ERP")
    out, err = capsys.readouterr()
    endpoint = Endpoint.objects.get()
    assert out == endpoint.secret + "\n"
    assert out.startswith("whsec_")
    assert (endpoint.merchant, endpoint.url, endpoint.description) == (
        merchant,
        "https://erp.example.com/receco",
        "ERP",
    )
    assert endpoint.event_types == []
    assert endpoint.enabled is True
    assert f"Created webhook endpoint {endpoint.pk} for mama-put: https://erp.example.com/receco (all events)" in err
    assert "cannot be shown again" in err


def test_it_takes_a_list_of_event_types(merchant, capsys):
    call_command(
        "createwebhook", merchant.string_id, "https://erp.example.com/", "--events", "receipt.voided,receipt.created"
    )
    assert Endpoint.objects.get().event_types == ["receipt.created", "receipt.voided"]


def test_it_refuses_an_unknown_event_type(merchant):
    with pytest.raises(CommandError, match=r"^Unknown event type 'receipt.deleted'; choose from receipt.created"):
        call_command("createwebhook", merchant.string_id, "https://erp.example.com/", "--events", "receipt.deleted")
    assert not Endpoint.objects.exists()


def test_it_refuses_http_except_localhost_where_allowed(merchant, settings):
    settings.DEBUG = False
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = False
    with pytest.raises(CommandError, match=r"^Use an https:// URL"):
        call_command("createwebhook", merchant.string_id, "http://localhost:8080/hooks")
    settings.RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST = True
    call_command("createwebhook", merchant.string_id, "http://localhost:8080/hooks")
    assert Endpoint.objects.get().url == "http://localhost:8080/hooks"


def test_it_refuses_an_unknown_merchant(db):
    with pytest.raises(CommandError, match=r"^No merchant with id 'nobody'$"):
        call_command("createwebhook", "nobody", "https://erp.example.com/")
