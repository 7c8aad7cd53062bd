"""The agent against the real Receco service, served by pytest-django's live server."""

import json
import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from receco_agent.config import key_problem
from receco_agent.outbox import Outbox
from receco_agent.tokens import short_code_for, sign

from merchants.keys import generate_key, revoke_key, well_formed
from receco.ops import metrics
from receipts.models import Receipt
from tests.agent.support import (
    AgentProcess,
    HoldingProxy,
    free_port,
    get_json,
    make_settings,
    post_json,
    run_agent_server,
    run_cli,
    stop_agent_server,
    wait_until,
)
from tests.background import serve_in_background
from tests.servers import closed_port

pytestmark = pytest.mark.django_db(transaction=True)


def sale(merchant_id: str = "test-agent-shop", **changes) -> dict:
    return {
        "merchantId": merchant_id,
        "merchantName": "Agent Test Shop",
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unitPrice": 150000, "totalPrice": 300000, "sku": "JR-1"},
            {"name": "Zobo", "quantity": 1, "unitPrice": 50000, "totalPrice": 50000},
        ],
        "totalAmount": 350000,
        "currency": "NGN",
        "paymentMethod": "card",
        "location": "Lekki",
        "timestamp": "2026-11-22T11:15:00+01:00",
        "cashierId": "cashier-1",
        "terminalId": "till-1",
        **changes,
    }


@pytest.fixture
def api_url(live_server) -> str:
    return f"{live_server.url}/api"


@pytest.fixture
def closed_api_url() -> Iterator[str]:
    with closed_port() as port:
        yield f"http://127.0.0.1:{port}/api"


@pytest.fixture
def agent_process(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    process = AgentProcess(
        home,
        {
            "RECECO_AGENT_PORT": str(free_port()),
            "RECECO_MERCHANT_ID": "test-agent-shop",
            "RECECO_WEB_URL": "http://web.test",
            "RECECO_PRINT_QR": "false",
            "RECECO_LOG_LEVEL": "debug",
        },
    )
    yield process
    process.stop()


def receipts_by_token(tokens) -> dict[str, int]:
    return {token: Receipt.objects.filter(token=token).count() for token in tokens}


def test_an_online_sale_reaches_the_service(tmp_path, api_url, live_server):
    running = run_agent_server(make_settings(tmp_path, api_url, merchant_id="test-agent-shop"), forwarder=False)
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", sale())
    finally:
        stop_agent_server(running)
    assert status == 200
    assert answer["status"] == "success"
    assert "queued" not in answer
    receipt = Receipt.objects.get(token=answer["receiptId"])
    assert receipt.short_code == answer["shortCode"]
    assert receipt.merchant.string_id == "test-agent-shop"
    assert receipt.merchant_name == "Agent Test Shop"
    assert receipt.total_amount == 350000
    assert receipt.payment_method == "card"
    assert receipt.location == "Lekki"
    assert receipt.items == [
        {"name": "Jollof rice", "quantity": 2, "unit_price": 150000, "total_price": 300000, "sku": "JR-1"},
        {"name": "Zobo", "quantity": 1, "unit_price": 50000, "total_price": 50000},
    ]
    status, body = get_json(f"{api_url}/trpc/getReceipt?input=" + quote(json.dumps({"token": answer["shortCode"]})))
    assert status == 200
    data = body["result"]["data"]
    # The POS's terminalId "till-1": the receipt is numbered in that till's series (a test one).
    assert data["receipt_number"] == f"TEST-TESTAG-TILL1-{receipt.number_series[-4:]}-000001"
    assert (data["token"], data["transaction_date"], data["status"]) == (
        answer["receiptId"],
        "2026-11-22T10:15:00.000Z",
        "completed",
    )


def test_an_online_refusal_is_returned_to_the_pos(tmp_path, api_url):
    running = run_agent_server(make_settings(tmp_path, api_url, merchant_id="unknown-shop"), forwarder=False)
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", sale("unknown-shop"))
        summary = running.agent.outbox.summary()
    finally:
        stop_agent_server(running)
    assert (status, answer) == (404, {"status": "error", "error": "Merchant not found", "code": "NOT_FOUND"})
    assert Receipt.objects.count() == 0
    assert (summary["pending"], summary["failed"]) == (0, 0)


def test_offline_sales_are_uploaded_when_the_service_is_back(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url)
    tokens = []
    for _ in range(3):
        status, answer, _ = post_json(f"{agent_process.url}/transactions", sale())
        assert (status, answer["status"], answer["queued"]) == (200, "success", True)
        tokens.append(answer["receiptId"])
    health = agent_process.health()
    assert (health["online"], health["pending"]) == (False, 3)
    assert agent_process.terminate() == 0

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    health = agent_process.health()
    assert (health["online"], health["failed"], health["done"]) == (True, 0, 3)
    assert health["last_success"] is not None
    assert receipts_by_token(tokens) == dict.fromkeys(tokens, 1)


def test_kill_9_with_queued_sales_then_restart_uploads_each_exactly_once(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url)
    answers = [post_json(f"{agent_process.url}/transactions", sale())[1] for _ in range(5)]
    tokens = [a["receiptId"] for a in answers]
    assert all(a["queued"] for a in answers)
    agent_process.kill9()

    queue = Outbox(agent_process.home / "queue.sqlite3")
    pending = queue.pending()
    assert [e.token for e in pending] == tokens
    # As if the first upload had reached the service just before the kill, unconfirmed.
    status, _, _ = post_json(f"{api_url}/trpc/createReceiptFromPOS", json.loads(pending[0].body))
    assert status == 200

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    assert receipts_by_token(tokens) == dict.fromkeys(tokens, 1)
    assert Receipt.objects.count() == 5
    assert [(queue.get(t).state, queue.get(t).short_code) for t in tokens] == [
        ("done", a["shortCode"]) for a in answers
    ]


def test_kill_9_during_a_batched_drain_then_restart_uploads_each_exactly_once(
    agent_process, live_server, api_url, closed_api_url
):
    agent_process.start(RECECO_API_URL=closed_api_url)
    tokens = [post_json(f"{agent_process.url}/transactions", sale())[1]["receiptId"] for _ in range(110)]
    agent_process.kill9()

    # Three batches (50, 50, 10); the service stores the second to arrive, and the agent
    # is killed before it hears the answer.
    proxy = HoldingProxy(live_server.url, hold_post=2)
    try:
        agent_process.start(RECECO_API_URL=f"{proxy.url}/api")
        assert proxy.held.wait(30)
        agent_process.kill9()
    finally:
        proxy.close()
    queue = Outbox(agent_process.home / "queue.sqlite3")
    stored = receipts_by_token(tokens)
    states = {t: queue.get(t).state for t in tokens}
    assert all(stored[t] == 1 for t in tokens if states[t] == "done")
    assert sum(1 for t in tokens if stored[t] == 1 and states[t] == "pending") >= 10  # stored, unconfirmed
    assert max(stored.values()) == 1

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=60)
    assert receipts_by_token(tokens) == dict.fromkeys(tokens, 1)
    assert Receipt.objects.count() == 110
    assert {queue.get(t).state for t in tokens} == {"done"}


def test_a_refused_sale_ends_failed_and_clear_queue_removes_it(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url, RECECO_MERCHANT_ID="unknown-shop")
    refused = post_json(f"{agent_process.url}/transactions", sale("unknown-shop"))[1]["receiptId"]
    agent_process.terminate()
    agent_process.start(RECECO_API_URL=closed_api_url)
    accepted = post_json(f"{agent_process.url}/transactions", sale())[1]["receiptId"]
    agent_process.terminate()

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    result = run_cli(agent_process.home, "status", "--json", env=agent_process.env)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert (status["running"], status["online"], status["pending"], status["failed"]) == (True, True, 0, 1)
    # The refused sale went up first, alone (the service's limits were not known yet), and
    # the upload after it succeeded: its error is no longer the last one, it is listed.
    assert status["last_error"] is None
    [failed] = status["failed_transactions"]
    assert (failed["token"], failed["status"], failed["error"]) == (refused, 404, "Merchant not found")
    assert receipts_by_token([refused, accepted]) == {refused: 0, accepted: 1}

    result = run_cli(agent_process.home, "clear-queue", env=agent_process.env)
    assert (result.returncode, result.stdout) == (0, "Removed 1 failed transaction(s) from the queue.\n")
    assert agent_process.health()["failed"] == 0
    assert Outbox(agent_process.home / "queue.sqlite3").get(refused) is None


def test_a_short_code_taken_meanwhile_is_replaced_and_reported(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url)
    answer = post_json(f"{agent_process.url}/transactions", sale())[1]
    agent_process.terminate()
    other = {
        "token": "rcpt_other000_aaaaaa",
        "merchant_string_id": "test-other-shop",
        "total_amount": 100,
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 100, "total_price": 100}],
    }
    assert post_json(f"{api_url}/trpc/createReceiptFromPOS", other)[0] == 200
    # Another receipt holds the printed code by chance: no sale may ask for a code derived
    # from a token not its own (receipts.claims), so the chance is placed here directly.
    Receipt.objects.filter(token="rcpt_other000_aaaaaa").update(short_code=answer["shortCode"])

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    receipt = Receipt.objects.get(token=answer["receiptId"])
    assert receipt.short_code != answer["shortCode"]
    [change] = agent_process.health()["short_code_changes"]
    assert change == {
        "token": answer["receiptId"],
        "requested": answer["shortCode"],
        "assigned": receipt.short_code,
        "at": change["at"],
    }
    result = run_cli(agent_process.home, "status", env=agent_process.env)
    assert (
        f"  short code changed by the service: {answer['receiptId']} {answer['shortCode']} -> {receipt.short_code}"
        in result.stdout
    )
    assert f"Short code {answer['shortCode']} was taken" in agent_process.log()


def test_the_test_command_uploads_a_sale(tmp_path, api_url):
    home = tmp_path / "home"
    env = {"RECECO_API_URL": api_url, "RECECO_WEB_URL": "http://web.test", "RECECO_PRINT_QR": "0"}
    assert run_cli(home, "init", "--merchant-id", "test-cli-shop", "--port", str(free_port())).returncode == 0
    result = run_cli(home, "test", env=env)
    assert result.returncode == 0, result.stderr
    receipt = Receipt.objects.get()
    assert result.stdout == (
        "The agent is not running; sending a test sale from here through the same queue\n"
        f"Short code:  {receipt.short_code}\n"
        f"Receipt URL: http://web.test/app/receipt/{receipt.token}\n"
        "Uploaded: the receipt is on the service.\n"
    )
    assert receipt.merchant.string_id == "test-cli-shop"
    assert receipt.total_amount == 100


def test_the_emulator_forwards_to_the_agent(tmp_path, api_url):
    from receco_agent.emulator import EmulatorServer, Till

    running = run_agent_server(make_settings(tmp_path, api_url, merchant_id="test-till"), forwarder=False)
    emulator = EmulatorServer(Till(running.url, "test-till", "Till Shop"), port=free_port())
    stop_emulator = serve_in_background(emulator)
    try:
        status, answer, _ = post_json(
            f"http://127.0.0.1:{emulator.server_address[1]}/test-transaction",
            {"items": [{"name": "Suya", "quantity": 3, "price": 20000}], "total": 60000, "paymentMethod": "cash"},
        )
    finally:
        stop_emulator()
        stop_agent_server(running)
    assert (status, answer["status"]) == (200, "success")
    receipt = Receipt.objects.get(token=answer["receiptId"])
    assert receipt.short_code == answer["shortCode"]
    assert (receipt.merchant_name, receipt.total_amount, receipt.payment_method) == ("Till Shop", 60000, "cash")
    assert receipt.items == [{"name": "Suya", "quantity": 3, "unit_price": 20000, "total_price": 60000}]


def test_a_body_the_service_refuses_ends_failed_with_its_message(agent_process, api_url):
    # A row whose body the service refuses (as an older agent version might have queued).
    queue = Outbox(agent_process.home / "queue.sqlite3")
    body = {"token": "rcpt_old00000_aaaaaa", "short_code": "ABCDEF", "merchant_string_id": "test-agent-shop"}
    queue.add(body["token"], body["short_code"], json.dumps({**body, "total_amount": 5}))
    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["failed"] == 1, timeout=30)
    [failed] = agent_process.health()["failed_transactions"]
    assert (failed["token"], failed["status"], failed["error"]) == (
        "rcpt_old00000_aaaaaa",
        400,
        "items: This field is required",
    )
    assert Receipt.objects.count() == 0


def test_the_merchants_key_is_sent_and_accepted(tmp_path, api_url, merchant, live_key):
    running = run_agent_server(
        make_settings(tmp_path, api_url, merchant_id="mama-put", api_key=live_key.key), forwarder=False
    )
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", sale("mama-put"))
    finally:
        stop_agent_server(running)
    assert (status, answer["status"]) == (200, "success")
    receipt = Receipt.objects.get(token=answer["receiptId"])
    assert receipt.merchant == merchant
    # Its token carries the proof of the key, and its short code is the token's.
    body = re.fullmatch(r"(rcpt_[0-9a-z]+_[0-9a-z]{6})_[0-9A-Za-z]{28}", receipt.token).group(1)
    assert receipt.token == sign(body, live_key.key)
    assert receipt.short_code == answer["shortCode"] == short_code_for(receipt.token)


@pytest.mark.parametrize(
    ("key_state", "status", "code", "message"),
    [
        ("revoked", 401, "UNAUTHORIZED", "API key has been revoked"),
        ("other merchant", 403, "FORBIDDEN", "API key belongs to another merchant"),
    ],
)
def test_a_refused_key_is_returned_at_the_till(
    tmp_path, api_url, merchant, other_live_key, key_state, status, code, message
):
    if key_state == "revoked":
        revoke_key(other_live_key.api_key)
    running = run_agent_server(
        make_settings(tmp_path, api_url, merchant_id="mama-put", api_key=other_live_key.key), forwarder=False
    )
    try:
        answer = post_json(f"{running.url}/transactions", sale("mama-put"))[:2]
        summary = running.agent.outbox.summary()
    finally:
        stop_agent_server(running)
    assert answer == (status, {"status": "error", "error": message, "code": code})
    assert (summary["pending"], summary["failed"], Receipt.objects.count()) == (0, 0, 0)


def test_the_agent_knows_the_services_key_form_and_checksum():
    for kind in ("test", "live"):
        key = generate_key(kind)
        mistyped = key[:30] + ("0" if key[30] != "0" else "1") + key[31:]
        assert (key_problem(key), well_formed(key) is not None) == (None, True)
        assert (key_problem(mistyped) is not None, well_formed(mistyped)) == (True, None)
        assert (key_problem(key[:-1]) is not None, well_formed(key[:-1])) == (True, None)


def test_the_breakdown_and_the_card_reach_the_service(tmp_path, api_url):
    running = run_agent_server(make_settings(tmp_path, api_url, merchant_id="test-agent-shop"), forwarder=False)
    breakdown = {
        "subtotalAmount": 350000,
        "discountAmount": 50000,
        "tipAmount": 10000,
        "totalAmount": 332500,
        "taxLines": [{"name": "VAT", "rate": 7.5, "taxableAmount": 300000, "taxAmount": 22500, "inclusive": False}],
        "paymentDetails": {"cardBrand": "Verve", "cardLast4": "4242", "authorizationCode": "A1B2C3"},
    }
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", sale(**breakdown))
    finally:
        stop_agent_server(running)
    assert (status, answer["status"]) == (200, "success")
    assert "queued" not in answer
    _, body = get_json(f"{api_url}/trpc/getReceipt?input=" + quote(json.dumps({"token": answer["receiptId"]})))
    data = body["result"]["data"]
    assert (data["subtotal_amount"], data["discount_amount"], data["tip_amount"], data["total_amount"]) == (
        350000,
        50000,
        10000,
        332500,
    )
    assert data["tax_lines"] == [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 300000, "tax_amount": 22500, "inclusive": False}
    ]
    assert data["payment_details"] == {"card_brand": "Verve", "card_last4": "4242", "authorization_code": "A1B2C3"}


def test_a_refund_is_answered_at_once_and_reaches_the_service(tmp_path, api_url):
    running = run_agent_server(make_settings(tmp_path, api_url, merchant_id="test-agent-shop"), forwarder=False)
    try:
        sold = post_json(f"{running.url}/transactions", sale())[1]
        status, answer, _ = post_json(
            f"{running.url}/refunds",
            {"receiptId": sold["receiptId"], "items": [{"index": 1, "quantity": 1}], "reason": "Warm drink"},
        )
    finally:
        stop_agent_server(running)
    assert status == 200
    refund = Receipt.objects.get(token=answer["receiptId"])
    assert answer == {
        "receiptId": refund.token,
        "refundOf": sold["receiptId"],
        "receiptUrl": f"http://web.test/app/receipt/{refund.token}",
        "qrCodeUrl": answer["qrCodeUrl"],
        "shortCode": refund.short_code,
        "amount": 50000,
        "status": "success",
    }
    assert refund.refund_of.token == sold["receiptId"]


def test_a_refund_of_a_queued_sale_goes_up_after_it(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url)
    sold = post_json(f"{agent_process.url}/transactions", sale())[1]
    status, refund, _ = post_json(f"{agent_process.url}/refunds", {"receiptId": sold["receiptId"], "amount": 1000})
    assert (status, refund["shortCode"], refund["queued"]) == (200, None, True)
    agent_process.terminate()
    # The refund was made after the sale, but let the queue hold it first: order is by sale.
    queue = Outbox(agent_process.home / "queue.sqlite3")
    assert [e.token for e in queue.pending()] == [sold["receiptId"]]

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    stored = Receipt.objects.get(token=refund["receiptId"])
    assert (stored.refund_of.token, stored.total_amount) == (sold["receiptId"], 1000)
    assert queue.get(refund["receiptId"]).state == "done"
    assert agent_process.health()["short_code_changes"] == []  # a refund's code is the service's, not a change


def test_a_refund_sent_with_its_sales_idempotency_key_is_made(tmp_path, api_url, merchant, live_key):
    running = run_agent_server(
        make_settings(tmp_path, api_url, merchant_id="mama-put", api_key=live_key.key), forwarder=False
    )
    headers = {"Idempotency-Key": "pos-7"}
    try:
        sold = post_json(f"{running.url}/transactions", sale("mama-put"), headers=headers)[1]
        status, refund, _ = post_json(
            f"{running.url}/refunds", {"receiptId": sold["receiptId"], "amount": 1000}, headers=headers
        )
        reused = post_json(f"{running.url}/refunds", {"receiptId": sold["receiptId"], "amount": 2000}, headers=headers)
    finally:
        stop_agent_server(running)
    assert status == 200
    stored = Receipt.objects.get(token=refund["receiptId"])
    assert (stored.refund_of.token, stored.total_amount, refund["amount"]) == (sold["receiptId"], 1000, 1000)
    assert reused[0] == 422
    assert Receipt.objects.filter(refund_of__isnull=False).count() == 1


def test_a_refund_by_short_code_never_overtakes_its_queued_sale(agent_process, api_url, closed_api_url):
    agent_process.start(RECECO_API_URL=closed_api_url)
    # The sale ends the first batch of 50 and its refund starts the second, sent at once.
    tokens = [post_json(f"{agent_process.url}/transactions", sale())[1]["receiptId"] for _ in range(49)]
    sold = post_json(f"{agent_process.url}/transactions", sale())[1]
    refund = post_json(f"{agent_process.url}/refunds", {"receiptId": sold["shortCode"], "amount": 1000})[1]
    tokens += [post_json(f"{agent_process.url}/transactions", sale())[1]["receiptId"] for _ in range(10)]
    assert (refund["refundOf"], refund["queued"]) == (sold["receiptId"], True)
    agent_process.terminate()

    agent_process.start(RECECO_API_URL=api_url)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=60)
    assert agent_process.health()["failed"] == 0
    stored = Receipt.objects.get(token=refund["receiptId"])
    assert (stored.refund_of.token, stored.total_amount) == (sold["receiptId"], 1000)
    assert receipts_by_token([*tokens, sold["receiptId"]]) == dict.fromkeys([*tokens, sold["receiptId"]], 1)


def test_a_backlog_is_paced_by_the_services_rate_limits_without_a_refusal(
    agent_process, api_url, closed_api_url, merchant, live_key, settings, monkeypatch
):
    settings.RECECO_RATELIMIT_LIVE_KEY = ["12/3s", "5/s"]
    refused = []
    monkeypatch.setattr(metrics, "rate_limit_refused", refused.append)
    keyed = {"RECECO_MERCHANT_ID": "mama-put", "RECECO_API_KEY": live_key.key}
    agent_process.start(RECECO_API_URL=closed_api_url, **keyed)
    tokens = [post_json(f"{agent_process.url}/transactions", sale("mama-put"))[1]["receiptId"] for _ in range(30)]
    agent_process.terminate()

    agent_process.start(RECECO_API_URL=api_url, **keyed)
    waiting = wait_until(lambda: (agent_process.health()["rate_limit"] or {}).get("wait_seconds"), timeout=30)
    result = run_cli(agent_process.home, "status", env={**agent_process.env, **keyed})
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=60)
    assert 0 < waiting <= 3
    assert "Rate limit:   12 calls per 3 s, 5 calls a second" in result.stdout
    assert refused == []
    assert receipts_by_token(tokens) == dict.fromkeys(tokens, 1)
    assert agent_process.health()["rate_limit"]["refused"] == 0


def test_what_a_till_printed_offline_cannot_be_claimed_by_another_merchant(
    agent_process, api_url, closed_api_url, merchant, live_key, other_live_key
):
    keyed = {"RECECO_MERCHANT_ID": "mama-put", "RECECO_API_KEY": live_key.key}
    agent_process.start(RECECO_API_URL=closed_api_url, **keyed)
    printed = post_json(f"{agent_process.url}/transactions", sale("mama-put"))[1]
    agent_process.terminate()
    # Another merchant, with a key of its own, asks first for the token and code the till printed.
    theirs = {
        "token": printed["receiptId"],
        "short_code": printed["shortCode"],
        "merchant_string_id": other_live_key.api_key.merchant.string_id,
        "total_amount": 100,
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 100, "total_price": 100}],
    }
    status, answer, _ = post_json(
        f"{api_url}/trpc/createReceiptFromPOS", theirs, headers={"Authorization": f"Bearer {other_live_key.key}"}
    )
    assert (status, answer["error"]["message"]) == (409, "Token was issued for another merchant")
    theirs["token"] = "rcpt_mwrjzn0u_4hisgg"  # with a token of their own, the printed code is not theirs either
    status, answer, _ = post_json(
        f"{api_url}/trpc/createReceiptFromPOS", theirs, headers={"Authorization": f"Bearer {other_live_key.key}"}
    )
    assert status == 200
    assert answer["result"]["data"]["short_code"] != printed["shortCode"]

    agent_process.start(RECECO_API_URL=api_url, **keyed)
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    receipt = Receipt.objects.get(token=printed["receiptId"])
    assert (receipt.merchant, receipt.short_code) == (merchant, printed["shortCode"])
    assert agent_process.health()["failed"] == 0


def test_what_a_till_printed_offline_without_a_key_is_never_lost_to_a_test_merchant(
    agent_process, api_url, closed_api_url, merchant
):
    # The agent has no key (the shop does not require one): its token is plain. Someone who
    # saw the slip sends a sale with its token and code for a test merchant, anonymously.
    agent_process.start(RECECO_API_URL=closed_api_url, RECECO_MERCHANT_ID="mama-put")
    printed = post_json(f"{agent_process.url}/transactions", sale("mama-put"))[1]
    agent_process.terminate()
    forgery = {
        "token": printed["receiptId"],
        "short_code": printed["shortCode"],
        "merchant_string_id": "test-anything",
        "merchant_name": "Mama Put Kitchen (Official)",
        "total_amount": 100,
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 100, "total_price": 100}],
    }
    status, answer, _ = post_json(f"{api_url}/trpc/createReceiptFromPOS", forgery)
    assert status == 200
    assert answer["result"]["data"]["short_code"] == printed["shortCode"]

    agent_process.start(RECECO_API_URL=api_url, RECECO_MERCHANT_ID="mama-put")
    wait_until(lambda: agent_process.health()["pending"] == 0, timeout=30)
    assert agent_process.health()["failed"] == 0
    receipt = Receipt.objects.get(token=printed["receiptId"])
    assert (receipt.merchant, receipt.short_code, receipt.livemode) == (merchant, printed["shortCode"], True)
    for reference in (printed["receiptId"], printed["shortCode"]):
        status, answer = get_json(f"{api_url}/trpc/getReceipt?input={quote(json.dumps({'token': reference}))}")
        assert (status, answer["result"]["data"]["total_amount"]) == (200, 350000)
