"""The official tRPC client (httpLink and httpBatchLink) works against the service unchanged."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLIENT_DIR = Path(__file__).resolve().parents[1] / "clients" / "trpc"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def node():
    """Node.js with the pinned @trpc/client installed (./dev test installs it)."""
    node = shutil.which("node")
    if node is None or not (CLIENT_DIR / "node_modules" / "@trpc" / "client").is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI needs Node.js and `npm ci` in tests/clients/trpc for the tRPC client test")
        pytest.skip("needs Node.js and `npm ci --prefix tests/clients/trpc`")
    return node


def test_the_official_client_calls_every_procedure(node, live_server):
    token = "rcpt_mtrpc001_abc123"
    completed = subprocess.run(
        [node, "client.mjs", live_server.url, token, "TRPC42"],
        cwd=CLIENT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)

    created = result["create"]
    assert created["ok"] is True
    assert created["data"]["token"] == token
    assert created["data"]["short_code"] == "TRPC42"
    assert result["replay"] == created

    assert result["get"]["ok"] is True
    assert result["get"]["data"]["merchant_name"] == "tRPC Shop"
    assert result["get"]["data"]["total_amount"] == 2500

    assert result["missing"] == {
        "ok": False,
        "message": "Receipt not found",
        "data": {"code": "NOT_FOUND", "httpStatus": 404, "path": "getReceipt"},
        "code": -32603,
    }
    assert result["malformed"]["message"] == "Invalid token format"
    assert result["malformed"]["data"]["code"] == "INVALID_INPUT"
    assert result["wrongKind"]["data"]["code"] == "METHOD_NOT_SUPPORTED"

    found, not_found = result["batch"]
    assert found["ok"] is True
    assert found["data"]["short_code"] == "TRPC42"
    assert not_found["data"] == {"code": "NOT_FOUND", "httpStatus": 404, "path": "getReceipt"}

    attached, refused = result["contact"]
    assert attached == {
        "ok": True,
        "data": {
            "success": True,
            "deliveries": [{"channel": "email", "destination": "c*******@example.com", "status": "queued"}],
        },
    }
    assert refused["message"] == "Email or phone number required"
