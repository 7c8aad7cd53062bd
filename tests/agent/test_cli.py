import json
import os
import signal
import socket
import stat
import subprocess
import threading
from urllib.request import urlopen

import pytest
from receco_agent.cli import _rate_limit_line
from receco_agent.outbox import Outbox

from tests.agent.support import (
    TEST_KEY,
    AgentProcess,
    Reply,
    agent_command,
    clean_environment,
    error_envelope,
    free_port,
    post_json,
    run_cli,
    wait_until,
)

SALE = {"merchantId": "test-shop", "items": [{"name": "Tea", "quantity": 1, "unitPrice": 100}], "totalAmount": 100}


def queue_rows(home, pending=0, failed=0):
    outbox = Outbox(home / "queue.sqlite3")
    for i in range(pending + failed):
        token = f"rcpt_cli{i:04d}_abcdef"
        outbox.add(token, "ABCDEF", json.dumps({"token": token}))
        if i >= pending:
            outbox.mark_failed(token, 404, "Merchant not found")
    return outbox


def test_init_writes_a_private_config(tmp_path, closed_url):
    home = tmp_path / "home"
    result = run_cli(
        home,
        "init",
        "--merchant-id",
        "test-shop",
        "--api-key",
        TEST_KEY,
        "--api-url",
        closed_url,
        "--web-url",
        "https://r.example",
        "--port",
        "4011",
    )
    assert result.returncode == 0, result.stderr
    path = home / "config.json"
    assert result.stdout == (
        f"Wrote {path} (readable only by you: it holds the API key).\n"
        f"Could not check the API key now: cannot reach {closed_url}/trpc/getReceipt?input=%7B%22token%22%3A%22"
        "rcpt_0_keycheck%22%7D: Connection refused\n"
        "Next: 'receco-agent test' to send a test sale, 'receco-agent start' to run the agent.\n"
    )
    assert TEST_KEY not in result.stdout + result.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert json.loads(path.read_text()) == {
        "merchantId": "test-shop",
        "apiKey": TEST_KEY,
        "rececoApiUrl": closed_url,
        "rececoWebUrl": "https://r.example",
        "enableOfflineMode": True,
        "printQRCodes": True,
        "port": 4011,
        "logLevel": "info",
    }


def test_init_checks_the_key_with_the_service(tmp_path, fake_service):
    fake_service.script.append(Reply(404, error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")))
    args = ("init", "--merchant-id", "test-shop", "--api-key", TEST_KEY, "--api-url", fake_service.api_url)
    result = run_cli(tmp_path, *args)
    assert result.returncode == 0, result.stderr
    assert f"Checked with {fake_service.api_url}: the service answers and accepts the API key.\n" in result.stdout
    fake_service.script.append(Reply(401, error_envelope(401, "UNAUTHORIZED", "API key has been revoked")))
    result = run_cli(tmp_path, *args)
    assert result.returncode == 1
    assert result.stderr == (
        "API key refused by the service: API key has been revoked. Copy the key again from the dashboard and "
        "run init with --api-key.\n"
    )


def test_init_says_to_restart_a_running_agent(tmp_path, closed_url):
    home = tmp_path / "home"
    port = free_port()
    assert run_cli(home, "init", "--merchant-id", "test-shop", "--port", str(port)).returncode == 0
    process = AgentProcess(home, {"RECECO_AGENT_PORT": str(port), "RECECO_API_URL": closed_url})
    try:
        process.start()
        result = run_cli(home, "init", "--merchant-id", "test-shop-2", env={"RECECO_AGENT_PORT": str(port)})
    finally:
        process.stop()
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(
        f"An agent is running on http://127.0.0.1:{port} with the old settings: restart it to use these "
        "('receco-agent stop-service' then 'start-service', or Ctrl-C and 'receco-agent start').\n"
    )


def test_an_agent_of_another_home_on_the_port_is_none_of_this_homes_business(tmp_path, closed_url):
    # As when another agent runs on the default port 3001 of the machine.
    env = {"RECECO_AGENT_PORT": str(free_port()), "RECECO_API_URL": closed_url}
    other = AgentProcess(tmp_path / "other", env)
    other.home.mkdir()
    home = tmp_path / "home"
    try:
        other.start()
        init = run_cli(home, "init", "--merchant-id", "test-shop", env=env)
        status = run_cli(home, "status", env=env)
    finally:
        other.stop()
    assert init.stdout.endswith(
        "Next: 'receco-agent test' to send a test sale, 'receco-agent start' to run the agent.\n"
    )
    assert status.stdout.startswith("Agent:        not running\n")


def test_init_refuses_a_bad_key_and_says_why(tmp_path):
    result = run_cli(tmp_path / "home", "init", "--merchant-id", "test-shop", "--api-key", "abc")
    assert result.returncode == 2
    assert result.stderr == (
        "receco-agent: configuration error: apiKey must be a Receco API key starting with postest_ or poslive_ "
        "(made in the merchant dashboard: the API keys link of your shop), or empty for none; got 'abc'\n"
    )
    assert not (tmp_path / "home" / "config.json").exists()


def test_invalid_settings_stop_any_command_with_the_fix(tmp_path):
    result = run_cli(tmp_path, "start", env={"RECECO_AGENT_PORT": "abc"})
    assert result.returncode == 2
    assert result.stderr == (
        "receco-agent: configuration error: port (from environment variable RECECO_AGENT_PORT) must be an integer "
        "from 1 to 65535; got 'abc'\n"
    )


def test_test_without_a_merchant_id_says_how_to_set_it(tmp_path):
    result = run_cli(tmp_path, "test", env={"RECECO_MERCHANT_ID": ""})
    assert result.returncode == 2
    assert result.stderr == (
        "receco-agent: configuration error: merchantId is not set: run 'receco-agent init --merchant-id <id> "
        "--api-key <key>' or set RECECO_MERCHANT_ID\n"
    )


def test_test_with_the_service_down_queues_and_fails(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}/api"
    env = {"RECECO_MERCHANT_ID": "test-shop", "RECECO_API_URL": closed, "RECECO_PRINT_QR": "0"}
    env["RECECO_AGENT_PORT"] = str(free_port())
    result = run_cli(tmp_path, "test", env=env)
    assert result.returncode == 1
    [entry] = Outbox(tmp_path / "queue.sqlite3").pending()
    assert f"Short code:  {entry.short_code}\n" in result.stdout
    assert result.stderr.endswith(
        f"Queued, not yet uploaded: cannot reach {closed}/trpc/createReceiptFromPOS: Connection refused\n"
        "It is uploaded as soon as the agent runs and the service answers.\n"
    )


def test_test_goes_through_a_running_agent(tmp_path, fake_service):
    process = AgentProcess(
        tmp_path / "home",
        {"RECECO_AGENT_PORT": str(free_port()), "RECECO_API_URL": fake_service.api_url, "RECECO_PRINT_QR": "0"},
    )
    process.home.mkdir()
    try:
        process.start(RECECO_MERCHANT_ID="test-shop")
        result = run_cli(process.home, "test", env={**process.env, "RECECO_MERCHANT_ID": "test-shop"})
    finally:
        process.stop()
    assert result.returncode == 0, result.stderr
    sent = [r["json"] for r in fake_service.requests if r["method"] == "POST"]
    assert len(sent) == 1
    assert result.stdout == (
        f"Sending a test sale through the running agent at {process.url}\n"
        f"Short code:  {sent[0]['short_code']}\n"
        f"Receipt URL: {fake_service.url}/app/receipt/{sent[0]['token']}\n"
        "Uploaded: the receipt is on the service.\n"
    )


def test_status_json_without_a_running_agent_reads_the_queue(tmp_path):
    queue_rows(tmp_path, pending=2, failed=1)
    closed = f"http://127.0.0.1:{free_port()}/api"
    result = run_cli(
        tmp_path, "status", "--json", env={"RECECO_API_URL": closed, "RECECO_AGENT_PORT": str(free_port())}
    )
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert (status["running"], status["online"], status["pending"], status["failed"]) == (False, False, 2, 1)
    assert status["last_success"] is None
    assert status["last_error"]["message"] == "Merchant not found"
    assert status["failed_transactions"][0]["token"] == "rcpt_cli0002_abcdef"


def test_status_of_a_fresh_home_creates_nothing(tmp_path):
    home = tmp_path / "fresh"
    closed = f"http://127.0.0.1:{free_port()}/api"
    result = run_cli(home, "status", env={"RECECO_API_URL": closed, "RECECO_AGENT_PORT": str(free_port())})
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Agent:        not running\n"
        f"Service:      unreachable ({closed})\n"
        "Queue:        0 pending, 0 failed\n"
        "Last upload:  never\n"
    )
    assert not (home / "queue.sqlite3").exists()


def test_clear_queue_and_retry_failed(tmp_path):
    outbox = queue_rows(tmp_path, pending=1, failed=2)
    result = run_cli(tmp_path, "retry-failed")
    assert (result.returncode, result.stdout) == (
        0,
        "Queued 2 failed transaction(s) again; the running agent sends them shortly.\n",
    )
    assert len(outbox.pending()) == 3
    outbox.mark_failed("rcpt_cli0001_abcdef", 404, "Merchant not found")
    result = run_cli(tmp_path, "clear-queue")
    assert (result.returncode, result.stdout) == (0, "Removed 1 failed transaction(s) from the queue.\n")
    assert outbox.summary()["failed"] == 0
    assert len(outbox.pending()) == 2


def test_start_on_a_busy_port_fails_with_advice(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli(tmp_path, "start", env={"RECECO_AGENT_PORT": str(port)}, timeout=30)
    assert result.returncode == 1
    assert (
        f"Cannot listen on 127.0.0.1:{port} (Address already in use); is another agent running? Choose another "
        "port with 'receco-agent init --port N' or RECECO_AGENT_PORT"
    ) in result.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_finishes_the_sale_being_uploaded(tmp_path, fake_service, signum):
    arrived = threading.Event()

    def slow(request):
        if request["method"] == "GET":
            return Reply(405, error_envelope(405, "METHOD_NOT_SUPPORTED", "Method not supported"))
        arrived.set()
        body = request["json"]
        data = {"id": 1, "token": body["token"], "short_code": body["short_code"]}
        return Reply(200, {"result": {"data": data}}, delay=1.5)

    fake_service.respond = slow
    process = AgentProcess(
        tmp_path / "home",
        {"RECECO_AGENT_PORT": str(free_port()), "RECECO_API_URL": fake_service.api_url, "RECECO_PRINT_QR": "0"},
    )
    process.home.mkdir()
    answers = []
    try:
        process.start()
        pos = threading.Thread(target=lambda: answers.append(post_json(f"{process.url}/transactions", SALE)))
        pos.start()
        assert arrived.wait(10)
        process.process.send_signal(signum)
        assert process.process.wait(30) == 0
        pos.join(10)
    finally:
        process.stop()
    [(status, answer, _)] = answers
    assert (status, answer["status"], "queued" in answer) == (200, "success", False)
    assert Outbox(process.home / "queue.sqlite3").get(answer["receiptId"]).state == "done"
    assert "Stopping: finishing uploads in flight" in process.log()
    assert process.log().rstrip().endswith("Stopped")


def test_the_emulator_command_serves_the_till(tmp_path):
    port = free_port()
    env = {**clean_environment(), "RECECO_AGENT_HOME": str(tmp_path), "RECECO_MERCHANT_ID": "test-shop"}
    log = (tmp_path / "emulator.log").open("wb")
    process = subprocess.Popen(
        [*agent_command(), "emulator", "--port", str(port), "--merchant-name", "Till & Co"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def page():
            try:
                with urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    return response.read().decode()
            except OSError:
                return None

        assert "<h1>Till &amp; Co</h1>" in wait_until(page, timeout=20)
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_the_emulator_refuses_a_bad_agent_url(tmp_path):
    result = run_cli(tmp_path, "emulator", "--agent-url", "file:///etc/passwd")
    assert result.returncode == 2
    assert "argument --agent-url: 'file:///etc/passwd' is not an http:// URL such as http://127.0.0.1:3001" in (
        result.stderr
    )


def test_an_idle_keep_alive_connection_does_not_hold_up_stopping(tmp_path, fake_service):
    process = AgentProcess(
        tmp_path / "home",
        {"RECECO_AGENT_PORT": str(free_port()), "RECECO_API_URL": fake_service.api_url, "RECECO_PRINT_QR": "0"},
    )
    process.home.mkdir()
    try:
        process.start()
        with socket.create_connection(("127.0.0.1", process.port), timeout=10) as idle:
            idle.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{process.port}\r\n\r\n".encode())
            assert idle.recv(65536).startswith(b"HTTP/1.1 200 ")
            process.process.send_signal(signal.SIGTERM)
            assert process.process.wait(10) == 0
    finally:
        process.stop()


def test_the_api_key_is_never_logged_or_shown(tmp_path, fake_service):
    key = TEST_KEY
    fake_service.respond = lambda request: Reply(401, error_envelope(401, "UNAUTHORIZED", "Invalid API key"))
    process = AgentProcess(
        tmp_path / "home",
        {
            "RECECO_AGENT_PORT": str(free_port()),
            "RECECO_API_URL": fake_service.api_url,
            "RECECO_API_KEY": key,
            "RECECO_LOG_LEVEL": "debug",
        },
    )
    process.home.mkdir()
    try:
        process.start()
        status, answer, _ = post_json(f"{process.url}/transactions", SALE)
        health = json.dumps(process.health())
        result = run_cli(process.home, "status", "--json", env=process.env)
    finally:
        process.stop()
    assert (status, answer["error"]) == (401, "Invalid API key")
    assert [r["headers"]["Authorization"] for r in fake_service.requests] == [f"Bearer {key}"] * 2
    assert "Invalid API key" in process.log()
    for text in (process.log(), health, result.stdout, result.stderr):
        assert "Zx81secret" not in text


def test_status_reports_a_damaged_queue(tmp_path, closed_url):
    home = tmp_path / "home"
    home.mkdir()
    (home / "queue.sqlite3").write_bytes(b"not a database" * 100)
    result = run_cli(home, "status", env={"RECECO_API_URL": closed_url})
    assert result.returncode == 0, result.stderr
    [kept] = home.glob("queue.sqlite3.damaged-*")
    assert "DAMAGED QUEUE: on " in result.stdout
    assert (
        f"the queue file was unreadable (file is not a database); it was kept as {kept} and a fresh queue "
        "started. Sales waiting in it were not uploaded." in result.stdout
    )
    assert f"The queue file {home / 'queue.sqlite3'} is damaged" in result.stderr


def test_status_says_what_the_services_rate_limits_hold_back():
    limits = [
        {"name": "minute", "quota": 1000, "window": 60, "remaining": 0},
        {"name": "second", "quota": 100, "window": 1, "remaining": 40},
    ]
    assert _rate_limit_line(None) is None
    assert _rate_limit_line({"wait_seconds": 0.0, "limits": limits, "refused": 0}) == (
        "1000 calls a minute, 100 calls a second"
    )
    assert _rate_limit_line({"wait_seconds": 41.6, "limits": limits, "refused": 3}) == (
        "1000 calls a minute, 100 calls a second; uploads wait 42 s for the limit; 3 call(s) refused with 429 since "
        "the start"
    )
