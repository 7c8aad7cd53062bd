import json

import pytest
from django.core.management import call_command

from merchants.models import KeyUsage
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def test_it_moves_the_counters_into_the_usage_table(api, live_key, capsys):
    for _ in range(2):
        api.client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "ZZZZZZ"})}, headers=bearer(live_key))
    call_command("flushusage")
    assert capsys.readouterr().out == "Flushed 2 API calls into the usage table\n"
    assert KeyUsage.objects.get().requests == 2


def test_it_reports_when_there_was_nothing_to_flush(db, capsys):
    call_command("flushusage")
    assert capsys.readouterr().out == "Flushed 0 API calls into the usage table\n"
