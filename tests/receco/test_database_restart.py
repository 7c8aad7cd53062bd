"""A PostgreSQL restart costs at most the requests in flight: gunicorn workers keep
persistent connections, and the health check replaces a dead one on the next request."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.db import connection

from tests.servers import start_gunicorn

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gunicorn(tmp_path):
    """A real gunicorn worker serving the project against the test database."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    server = start_gunicorn(url, tmp_path / "gunicorn.log")
    yield server.url
    server.stop()


def _get_receipt(base: str, token: str) -> int:
    query = urllib.parse.urlencode({"input": json.dumps({"token": token})})
    try:
        with urllib.request.urlopen(f"{base}/api/trpc/getReceipt?{query}", timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _terminate_other_backends() -> int:
    """Terminate the other connections to the test database and wait until they are gone:
    pg_terminate_backend only signals, and a backend still exiting can pass a worker's
    health check on a loaded machine, then fail its query."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [pid for (pid,) in cursor.fetchall()]
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM unnest(%s::int[]) AS pid", [pids])
        terminated = cursor.fetchone()[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.02)
        return terminated


def test_workers_recover_after_their_connections_are_killed(gunicorn, receipt_factory):
    receipt = receipt_factory()
    assert _get_receipt(gunicorn, receipt.token) == 200
    assert _terminate_other_backends() >= 1  # the worker's persistent connection
    assert [_get_receipt(gunicorn, receipt.token) for _ in range(3)] == [200, 200, 200]
