from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from merchants.models import ApiKey
from tests.helpers import admitted_key

pytestmark = pytest.mark.django_db


def test_it_prints_the_new_key_on_the_last_line(live_key, capsys):
    call_command("rotateapikey", live_key.key)
    out, err = capsys.readouterr()
    new_key = out.splitlines()[-1]
    assert new_key.startswith("poslive_")
    assert new_key != live_key.key
    old = ApiKey.objects.get(pk=live_key.api_key.pk)
    assert admitted_key(new_key) == old.rotated_to
    assert f"Rotated {old.prefix} of mama-put: it stops working at" in err


def test_the_old_key_has_24_hours_by_default(live_key, capsys):
    before = timezone.now()
    call_command("rotateapikey", live_key.api_key.prefix)
    old = ApiKey.objects.get(pk=live_key.api_key.pk)
    assert before + timedelta(hours=24) <= old.expires_at <= timezone.now() + timedelta(hours=24)
    assert admitted_key(live_key.key) == old


@pytest.mark.parametrize(("grace", "expected"), [("30m", timedelta(minutes=30)), ("2d", timedelta(days=2))])
def test_it_takes_a_grace_period(live_key, grace, expected, capsys):
    before = timezone.now()
    call_command("rotateapikey", live_key.api_key.prefix, "--grace", grace)
    old = ApiKey.objects.get(pk=live_key.api_key.pk)
    assert before + expected <= old.expires_at <= timezone.now() + expected


def test_no_grace_stops_the_old_key_now(live_key, capsys):
    call_command("rotateapikey", live_key.api_key.prefix, "--grace", "0")
    from receco.errors import Unauthorized

    with pytest.raises(Unauthorized, match="API key has expired"):
        admitted_key(live_key.key)


def test_it_refuses_a_bad_grace(live_key):
    with pytest.raises(CommandError, match="--grace must look like 24h, 30m, 2d or 0, not '1 week'"):
        call_command("rotateapikey", live_key.api_key.prefix, "--grace", "1 week")


def test_it_refuses_a_revoked_key(live_key):
    call_command("revokeapikey", live_key.api_key.prefix)
    with pytest.raises(CommandError, match="is revoked: only active keys can be rotated"):
        call_command("rotateapikey", live_key.api_key.prefix)


def test_it_refuses_an_unknown_key(db):
    with pytest.raises(CommandError, match="No such API key"):
        call_command("rotateapikey", "poslive_AAAAAAAAAAAA")


def test_it_refuses_something_that_is_not_a_key(db):
    with pytest.raises(CommandError, match="give a full key or its prefix"):
        call_command("rotateapikey", "hello")
