"""A PostgreSQL restart costs at most the requests in flight: gunicorn workers keep
persistent connections, and the health check replaces a dead one on the next request."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn():
    """A real gunicorn worker serving the project against the test database."""
    db = connection.settings_dict
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "DJANGO_SECRET_KEY": "tests-only-secret-key-not-for-any-deployment",
        "DJANGO_SETTINGS_MODULE": "receco.settings",
    }
    command = [sys.executable, "-m", "gunicorn", "--workers", "1", "--bind", f"127.0.0.1:{port}", "receco.wsgi"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"gunicorn did not start: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
    yield base
    process.terminate()
    process.wait(timeout=10)


def _get_receipt(base: str, token: str) -> int:
    query = urllib.parse.urlencode({"input": json.dumps({"token": token})})
    try:
        with urllib.request.urlopen(f"{base}/api/trpc/getReceipt?{query}", timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _terminate_other_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_workers_recover_after_their_connections_are_killed(gunicorn, receipt_factory):
    receipt = receipt_factory()
    assert _get_receipt(gunicorn, receipt.token) == 200
    assert _terminate_other_backends() >= 1  # the worker's persistent connection
    assert [_get_receipt(gunicorn, receipt.token) for _ in range(3)] == [200, 200, 200]
