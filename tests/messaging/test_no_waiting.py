"""Outside debug mode no sale waits for an outside party (issue 19, item 2): the task
backend is the database's by default, and the immediate one, which sends in the process
that asked, is refused at start-up."""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests import databases
from tests.receivers import SlowReceiver
from tests.servers import manage, start_gunicorn

ROOT = Path(__file__).resolve().parents[2]
RECEIVERS_ALLOWED = {"RECECO_WEBHOOKS_ALLOW_HTTP_LOCALHOST": "1", "RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES": "1"}


def test_a_sale_with_a_slow_endpoint_is_answered_at_once(tmp_path):
    """The review's sale took 30.6 s and gunicorn killed its worker: the immediate backend
    sent the event inside the request, to an endpoint that trickled its answer. No clock
    decides here (a busy machine once made the first answer of a fresh worker take longer
    than a fixed bound): the sale is answered 200, and when it is, the endpoint has been
    sent nothing, which a web process sending the event itself could not do."""
    slow = SlowReceiver(every=2.0, length=60)
    database = databases.fresh(tmp_path)
    try:
        manage(database, "createmerchant", "slow-shop", "--name", "Slow shop", "--no-require-api-key")
        manage(database, "createwebhook", "slow-shop", slow.url, **RECEIVERS_ALLOWED)
        server = start_gunicorn(database, tmp_path / "gunicorn.log", **RECEIVERS_ALLOWED)
        try:
            sale = {
                "merchant_string_id": "slow-shop",
                "total_amount": 2500,
                "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
            }
            request = urllib.request.Request(
                f"{server.url}/api/trpc/createReceiptFromPOS",
                json.dumps(sale).encode(),
                {"Content-Type": "application/json"},
            )
            # Past gunicorn's 30 s worker timeout: a sale that waited for the endpoint
            # (2 minutes) is cut off by gunicorn before this, and the test fails.
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200
                assert slow.arrived == []  # the web process sent nothing: a worker will
        finally:
            server.stop()
        assert slow.arrived == []
    finally:
        slow.close()


def _start(**env: str) -> subprocess.CompletedProcess:
    """Load the project's settings and apps in a fresh interpreter, as every process starts."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "RECECO_"))}
    code = (
        "import django; django.setup(); from django.conf import settings; print(settings.TASKS['default']['BACKEND'])"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "receco.settings",
            "DJANGO_SECRET_KEY": "tests-only",
            "RECECO_LOCAL_CACHE": "1",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_database_backend_is_the_default_outside_debug():
    started = _start()
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "django_tasks_db.DatabaseBackend"


def test_the_immediate_backend_is_refused_outside_debug():
    started = _start(RECECO_TASKS_BACKEND="immediate")
    assert started.returncode == 1
    assert "RECECO_TASKS_BACKEND=immediate is for development and tests only" in started.stderr


def test_in_debug_mode_the_immediate_backend_is_the_default():
    started = _start(DJANGO_DEBUG="1")
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "django_tasks.backends.immediate.ImmediateBackend"
