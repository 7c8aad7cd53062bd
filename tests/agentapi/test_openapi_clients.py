"""Clients made by common OpenAPI generators from /api/openapi.json call every procedure
of a live server: openapi-python-client (pinned in requirements-dev.txt) for Python, and
openapi-typescript with openapi-fetch (pinned in tests/clients/openapi/package-lock.json)
for TypeScript, its script type-checked by tsc against the generated types first.

openapi-python-client drops a query parameter declared with "content": getReceipt's
input is therefore declared as a string holding JSON (agentapi.openapi.document)."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from merchants.keys import issue_key
from merchants.models import Merchant
from receco.lib.trpc import PROCEDURES

CLIENT_DIR = Path(__file__).resolve().parents[1] / "clients" / "openapi"
BIN = Path(sys.executable).parent
MERCHANT = "test-generated"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def document(live_server, tmp_path) -> Path:
    """The document as the live server serves it, in a file, as a generator reads it."""
    path = tmp_path / "openapi.json"
    with urllib.request.urlopen(f"{live_server.url}/api/openapi.json", timeout=10) as response:
        path.write_bytes(response.read())
    return path


@pytest.fixture
def key() -> str:
    """A test key of a test- merchant (made before its first sale, as createapikey does)."""
    return issue_key(Merchant.objects.for_key(MERCHANT), "test", "generated client").key


def _sale(token: str) -> dict:
    return {
        "token": token,
        "merchant_string_id": MERCHANT,
        "total_amount": 130000,
        "currency": "NGN",
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
        ],
        "payment_method": "card",
    }


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).replace("_p_o_s", "_pos")


@pytest.fixture
def python_client(document, tmp_path):
    """The package openapi-python-client generates from the document, imported."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hook
    completed = subprocess.run(
        [str(BIN / "openapi-python-client"), "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(tmp_path / "receco_client")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # Anything it could not generate it reports as a warning, and leaves out.
    assert "Warning" not in completed.stdout + completed.stderr, completed.stdout + completed.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("receco_client")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[0] == "receco_client"]:
            del sys.modules[name]


def test_openapi_python_client_makes_a_client_that_calls_every_procedure(python_client, live_server, key):
    modules = {
        name: importlib.import_module(f"receco_client.api.default.{_snake(name)}") for name in sorted(PROCEDURES)
    }
    models = importlib.import_module("receco_client.models")
    client = python_client.AuthenticatedClient(base_url=live_server.url, token=key)
    token = "rcpt_generated_py0001"

    created = modules["createReceiptFromPOS"].sync_detailed(
        client=client, body=models.CreateReceiptFromPosBody.from_dict(_sale(token))
    )
    assert created.status_code == 200, created.content
    short_code = created.parsed.result.data.short_code

    # The input of a query, which the generator would have dropped, is passed as JSON.
    read = modules["getReceipt"].sync_detailed(client=client, input_=json.dumps({"token": short_code}))
    assert read.status_code == 200, read.content
    assert (read.parsed.result.data.token, read.parsed.result.data.total_amount) == (token, 130000)

    missing = modules["getReceipt"].sync_detailed(client=client, input_=json.dumps({"token": "ZZZZZZ"}))
    assert missing.status_code == 404
    assert missing.parsed.error.message == "Receipt not found"

    contact = modules["updateReceiptContact"].sync_detailed(
        client=client, body=models.UpdateReceiptContactBody(token=token, email="customer@example.com")
    )
    assert contact.status_code == 200, contact.content
    assert contact.parsed.result.data.success is True

    refund = modules["refundReceipt"].sync_detailed(
        client=client,
        body=models.RefundReceiptBody.from_dict({"token": token, "items": [{"index": 1, "quantity": 1}]}),
    )
    assert refund.status_code == 200, refund.content
    assert refund.parsed.result.data.amount == 30000

    other = modules["createReceiptFromPOS"].sync_detailed(
        client=client, body=models.CreateReceiptFromPosBody.from_dict(_sale(token + "v"))
    )
    assert other.status_code == 200, other.content
    voided = modules["voidReceipt"].sync_detailed(
        client=client, body=models.VoidReceiptBody(token=token + "v", reason="Rung up twice")
    )
    assert voided.status_code == 200, voided.content
    assert voided.parsed.result.data.status == "voided"


@pytest.fixture
def node():
    """Node.js with the pinned generator, client and compiler (./dev test runs npm ci)."""
    node = shutil.which("node")
    if node is None or not (CLIENT_DIR / "node_modules" / "openapi-typescript").is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI needs Node.js and `npm ci` in tests/clients/openapi for the generated client test")
        pytest.skip("needs Node.js and `npm ci --prefix tests/clients/openapi`")
    return node


def test_openapi_typescript_makes_types_a_checked_client_calls_every_procedure_with(
    node, document, live_server, key, tmp_path
):
    work = tmp_path / "ts"
    work.mkdir()
    (work / "node_modules").symlink_to(CLIENT_DIR / "node_modules")
    (work / "package.json").write_text('{"type": "module"}')
    shutil.copy(CLIENT_DIR / "client.ts", work / "client.ts")

    def run(*command: str) -> str:
        completed = subprocess.run([node, *command], cwd=work, capture_output=True, text=True, timeout=120, check=False)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        return completed.stdout

    run("node_modules/openapi-typescript/bin/cli.js", str(document), "--output", "schema.d.ts")
    # The script compiles only if the generated types let it pass every input it sends.
    run("node_modules/typescript/bin/tsc", "--strict", "--target", "es2022", "--module", "nodenext",
        "--moduleResolution", "nodenext", "--skipLibCheck", "--outDir", "out", "client.ts", "schema.d.ts")  # fmt: skip
    results = json.loads(run("out/client.js", live_server.url, key, MERCHANT, "rcpt_generated_ts0001"))

    assert set(results) - {"missing"} == set(PROCEDURES)
    assert results["createReceiptFromPOS"]["status"] == 200
    assert results["createReceiptFromPOS"]["data"]["token"] == "rcpt_generated_ts0001"
    assert results["getReceipt"]["status"] == 200
    assert results["getReceipt"]["data"]["token"] == "rcpt_generated_ts0001"
    assert results["missing"] == {
        "status": 404,
        "error": {
            "message": "Receipt not found",
            "code": -32603,
            "data": {"code": "NOT_FOUND", "httpStatus": 404, "path": "getReceipt"},
        },
    }
    assert results["updateReceiptContact"]["status"] == 200
    assert results["updateReceiptContact"]["data"]["success"] is True
    assert results["refundReceipt"]["status"] == 200
    assert results["refundReceipt"]["data"]["amount"] == 30000
    assert (results["voidReceipt"]["sale"], results["voidReceipt"]["status"]) == (200, 200)
    assert results["voidReceipt"]["data"]["status"] == "voided"
    for name in ("getReceiptProof", "getLogCheckpoint", "getLogConsistency"):
        assert results[name]["status"] == 404, results[name]
        assert results[name]["error"]["data"] == {"code": "NOT_FOUND", "httpStatus": 404, "path": name}
