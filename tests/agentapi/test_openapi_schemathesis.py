"""Schemathesis's command line with every check (`--checks all`) against a real server:
gunicorn with the production settings, the document it serves, the sale of its examples
stored and in the signed log. Issue 32.14's review ran it and found the document and the
service apart: `1556.0` refused where JSON Schema's integer admits it, getLogCheckpoint's
optional input marked required, refundReceipt's "an amount or items" and
updateReceiptContact's "an email or a phone" unstated, the forms of tokens unstated, and
`Allow: GET, POST` on paths of one method. It finds nothing now, both ways: what fits the
document is accepted, what does not is refused.

Two things are given to it. The queries' input is declared by "content" (the standard
form) rather than as the string holding JSON that the served document declares for the
generators that drop "content" (agentapi.openapi.document): read as a plain string, any
text would be valid input. And tests/agentapi/schemathesis_hooks.py keeps it from drawing
inputs that break the rules no schema can state, checked by the service's own code.
The run is bounded and seeded: the same cases every time.
"""

import copy
import io
import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from django.core.management import call_command
from django.db import connection

from agentapi.openapi.inputs import SALE_EXAMPLE
from tests.servers import ROOT, forget_cache_prefix, start_gunicorn

# A group of its own (tests/passes.py keeps a test's xdist_group): the run times nothing
# and waits on nothing but its answers, so it shares a core with whatever the other worker
# runs, instead of adding its minute to the serial "servers" group, which bounds a run.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("schemathesis")]

MAX_EXAMPLES = 40
SEED = 1
UNLIMITED = "1000000/m"


def _with_content_inputs(document: dict) -> dict:
    document = copy.deepcopy(document)
    for item in document["paths"].values():
        for parameter in item.get("get", {}).get("parameters", []):
            parameter["content"] = {"application/json": {"schema": parameter.pop("schema")["contentSchema"]}}
    return document


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def server(tmp_path, settings):
    """gunicorn on the suite's database (on SQLite a file: tests/conftest.py), its limits
    lifted so that the fuzzing reaches the procedures; the example sale stored, and a live
    sale appended to the log."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    else:
        url = f"sqlite:///{db['NAME']}"
    env = {
        "RECECO_RATELIMIT_ANONYMOUS": UNLIMITED,
        "RECECO_RATELIMIT_FAILED_LOOKUPS": UNLIMITED,
        "RECECO_RATELIMIT_TEST_MERCHANTS": UNLIMITED,
        "RECECO_SIGNING_KEYS": os.environ["RECECO_SIGNING_KEYS"],
        "RECECO_LOG_COMMIT_LAG": "1",
        "RECECO_WEB_URL": "http://127.0.0.1",
    }
    gunicorn = start_gunicorn(url, tmp_path / "gunicorn.log", **env)
    try:
        request = urllib.request.Request(
            f"{gunicorn.url}/api/trpc/createReceiptFromPOS",
            json.dumps(SALE_EXAMPLE).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
        # The example's merchant is a test merchant, whose receipts the log never takes: a
        # live shop's sale gives the log the entry its proofs are drawn from.
        # Made here (the test's database is committed: the server reads it), not by a process.
        _command("createmerchant", "fuzz-shop", "--name", "Fuzz Shop", "--no-require-api-key")
        live = {**SALE_EXAMPLE, "merchant_string_id": "fuzz-shop", "token": None, "short_code": None}
        request = urllib.request.Request(
            f"{gunicorn.url}/api/trpc/createReceiptFromPOS",
            json.dumps(live).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
        # The log takes a sale once it is older than the commit lag: until then it appends
        # nothing. Appended here, under the server's commit lag and signing keys.
        settings.RECECO_LOG_COMMIT_LAG = int(env["RECECO_LOG_COMMIT_LAG"])
        deadline = time.monotonic() + 60
        while "the log holds 1" not in _command("appendlog", "--once"):
            assert time.monotonic() < deadline, "the example sale never entered the log"
            time.sleep(0.1)
        yield gunicorn
    finally:
        gunicorn.stop()
        forget_cache_prefix()


def test_schemathesis_with_every_check_finds_no_mismatch(server, tmp_path):
    with urllib.request.urlopen(f"{server.url}/api/openapi.json", timeout=30) as answer:
        document = json.load(answer)
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(_with_content_inputs(document)))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SCHEMATHESIS_HOOKS": "tests.agentapi.schemathesis_hooks",
        "RECECO_FUZZ_LOG_SIZE": "1",
    }
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", str(path), "--url", server.url, "--checks", "all",
        "--workers", "1", "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES), "--continue-on-failure",
        "--generation-database", "none", "--no-color",
    ]  # fmt: skip
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-4000:]
    # Every phase ran, and every one of the eight procedures was tested.
    for phase in ("✅ Examples", "✅ Coverage", "✅ Fuzzing"):
        assert phase in run.stdout, run.stdout[-4000:]
    assert "Tested: 8" in run.stdout, run.stdout[-4000:]
