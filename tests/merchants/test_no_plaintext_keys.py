"""No full API key, nor its secret part, is stored anywhere in the database: not in the
key table, the admin log, sessions or messages, whichever way the key was made."""

import io
import re

import pytest
from django.core.management import call_command
from django.db import connection

from merchants.keys import issue_key, rotate_key
from merchants.models import ApiKey

pytestmark = pytest.mark.django_db

KEY_IN_PAGE = re.compile(r'id="new-api-key"[^>]*>(pos(?:test|live)_[0-9A-Za-z]{50})</textarea>')


def _database_text() -> str:
    """Every row of every table, as text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(chunks)


def test_no_key_is_stored_in_plaintext(client, api, owner, merchant, caplog):
    keys = [issue_key(merchant, "live", "function").key]
    keys.append(rotate_key(ApiKey.objects.get()).key)

    out = io.StringIO()
    call_command("createapikey", merchant.string_id, "--type", "test", stdout=out, stderr=io.StringIO())
    keys.append(out.getvalue().strip())
    out = io.StringIO()
    call_command("rotateapikey", keys[-1], stdout=out, stderr=io.StringIO())
    keys.append(out.getvalue().strip())

    client.post("/admin/login/", {"username": "olu", "password": "not-used-in-tests"})  # a real sign-in: sessions, axes
    page = client.post(
        "/admin/merchants/apikey/add/", {"merchant": merchant.pk, "type": "live", "name": "admin"}, follow=True
    )
    keys.append(KEY_IN_PAGE.search(page.content.decode())[1])
    newest = ApiKey.objects.get(name="admin", rotated_to__isnull=True)
    page = client.post(f"/admin/merchants/apikey/{newest.pk}/rotate/", {"grace": "3600"}, follow=True)
    keys.append(KEY_IN_PAGE.search(page.content.decode())[1])
    client.get("/admin/merchants/apikey/")  # messages and session writes

    for key in keys:  # use each once, so last-used and usage rows exist too
        api.get("getReceipt", {"token": "ZZZZZZ"}, Authorization=f"Bearer {key}")
    call_command("flushusage", stdout=io.StringIO())

    assert ApiKey.objects.count() == 6
    assert len(set(keys)) == 6
    text = _database_text()
    assert ApiKey.objects.first().digest in text  # the dump does see the key table
    for key in keys:
        assert key not in text
        assert key[20:52] not in text  # the secret alone
    for key in keys:
        assert key[20:52] not in caplog.text
