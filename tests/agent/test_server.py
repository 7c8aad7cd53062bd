import base64
import contextlib
import json
import re
import socket
import sqlite3
import threading
import time

import pytest
from receco_agent import busy, qr
from receco_agent.httputil import Stopping
from receco_agent.outbox import Outbox

from tests.agent.support import (
    Reply,
    error_envelope,
    get_json,
    make_settings,
    post_json,
    run_agent_server,
    stop_agent_server,
)

SALE = {
    "merchantId": "test-shop",
    "merchantName": "Mama Put",
    "items": [{"name": "Jollof", "quantity": 2, "unitPrice": 1500, "totalPrice": 3000}],
    "totalAmount": 3000,
    "currency": "NGN",
    "paymentMethod": "card",
    "cashierId": "c-7",
    "terminalId": "t-2",
}


@pytest.fixture
def offline_agent(tmp_path, closed_url):
    running = run_agent_server(make_settings(tmp_path / "home", closed_url), forwarder=False)
    yield running
    stop_agent_server(running)


def test_online_sale_is_uploaded_before_the_answer(agent_server, fake_service):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert status == 200
    assert set(answer) == {
        "receiptId",
        "receiptUrl",
        "qrCodeUrl",
        "shortCode",
        "status",
    }
    assert answer["status"] == "success"
    token = answer["receiptId"]
    assert re.fullmatch(r"rcpt_[0-9a-z]+_[0-9a-z]{6}", token)
    assert answer["receiptUrl"] == f"http://web.test/app/receipt/{token}"
    assert answer["qrCodeUrl"] == qr.png_data_url(answer["receiptUrl"])
    png = base64.b64decode(answer["qrCodeUrl"].removeprefix("data:image/png;base64,"))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert re.fullmatch(r"[A-Z2-9]{6}", answer["shortCode"])

    [request] = fake_service.requests
    sent = request["json"]
    assert sent == {
        "token": token,
        "short_code": answer["shortCode"],
        "merchant_string_id": "test-shop",
        "merchant_name": "Mama Put",
        "currency": "NGN",
        "payment_method": "card",
        "total_amount": 3000,
        "transaction_date": sent["transaction_date"],
        "items": [{"name": "Jollof", "quantity": 2, "unit_price": 1500, "total_price": 3000}],
        "status": "completed",
        "terminal_id": "t-2",  # the till: the service numbers the receipt in its series
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", sent["transaction_date"])
    entry = agent_server.agent.outbox.get(token)
    assert entry.state == "done"
    assert agent_server.agent.outbox.summary()["last_success"] is not None


def test_the_sale_is_committed_before_the_upload(agent_server, fake_service):
    seen = {}

    def respond(request):
        token = request["json"]["token"]
        # A separate connection: only committed data is visible here.
        seen["entry"] = Outbox(agent_server.agent.outbox.path).get(token)
        return Reply(503, error_envelope(503, "INTERNAL_SERVER_ERROR", "down"))

    fake_service.respond = respond
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert (status, answer["queued"]) == (200, True)
    assert seen["entry"].token == answer["receiptId"]
    assert seen["entry"].state == "pending"


def test_local_only_fields_stay_in_the_queue(agent_server, fake_service):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert status == 200
    with contextlib.closing(sqlite3.connect(agent_server.agent.outbox.path)) as conn:
        local = conn.execute("SELECT local FROM outbox WHERE token = ?", (answer["receiptId"],)).fetchone()[0]
    assert json.loads(local) == {"cashierId": "c-7", "terminalId": "t-2"}
    assert "cashierId" not in fake_service.requests[0]["raw"].decode()


def test_api_key_is_sent_as_bearer(tmp_path, fake_service):
    running = run_agent_server(
        make_settings(tmp_path, fake_service.api_url, api_key="postest_k"),
        forwarder=False,
    )
    try:
        post_json(f"{running.url}/transactions", SALE)
    finally:
        stop_agent_server(running)
    assert fake_service.requests[0]["headers"]["Authorization"] == "Bearer postest_k"


def test_a_reassigned_short_code_is_answered_and_recorded(agent_server, fake_service):
    fake_service.assign_short_code = "ZZZ999"
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert (status, answer["shortCode"]) == (200, "ZZZ999")
    [change] = agent_server.agent.outbox.summary()["short_code_changes"]
    assert (change["token"], change["assigned"]) == (answer["receiptId"], "ZZZ999")
    assert change["requested"] == fake_service.requests[0]["json"]["short_code"]


def test_a_refusal_during_the_sale_goes_back_to_the_pos(agent_server, fake_service):
    fake_service.script.append(Reply(404, error_envelope(404, "NOT_FOUND", "Merchant not found")))
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert status == 404
    assert answer == {
        "status": "error",
        "error": "Merchant not found",
        "code": "NOT_FOUND",
    }
    summary = agent_server.agent.outbox.summary()
    assert (summary["pending"], summary["failed"], summary["done"]) == (0, 0, 0)
    assert summary["last_error"]["message"] == "Merchant not found"


def test_service_down_queues_the_sale(offline_agent):
    status, answer, _ = post_json(f"{offline_agent.url}/transactions", SALE)
    assert status == 200
    assert answer["status"] == "success"
    assert answer["queued"] is True
    assert answer["receiptUrl"] == f"http://web.test/app/receipt/{answer['receiptId']}"
    [entry] = Outbox(offline_agent.agent.outbox.path).pending()
    assert (entry.token, entry.short_code, entry.attempts) == (
        answer["receiptId"],
        answer["shortCode"],
        1,
    )


def test_rate_limited_sale_is_queued(agent_server, fake_service):
    fake_service.script.append(
        Reply(
            429,
            error_envelope(429, "TOO_MANY_REQUESTS", "Rate limit exceeded"),
            {"Retry-After": "30"},
        )
    )
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert (status, answer["queued"]) == (200, True)
    assert agent_server.agent.outbox.summary()["pending"] == 1


def test_without_offline_mode_an_unreachable_service_is_an_error(tmp_path, closed_url):
    running = run_agent_server(make_settings(tmp_path, closed_url, offline_mode=False), forwarder=False)
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", SALE)
        summary = running.agent.outbox.summary()
    finally:
        stop_agent_server(running)
    assert status == 503
    assert answer == {
        "status": "error",
        "error": f"Receco service unavailable (cannot reach {closed_url}/trpc/createReceiptFromPOS: "
        "Connection refused); the sale was not queued because enableOfflineMode is false",
    }
    assert (summary["pending"], summary["failed"]) == (0, 0)


def test_without_offline_mode_a_failing_service_is_a_bad_gateway(tmp_path, fake_service):
    fake_service.script.append(Reply(500, error_envelope(500, "INTERNAL_SERVER_ERROR", "Internal server error")))
    running = run_agent_server(
        make_settings(tmp_path, fake_service.api_url, offline_mode=False),
        forwarder=False,
    )
    try:
        status, answer, _ = post_json(f"{running.url}/transactions", SALE)
    finally:
        stop_agent_server(running)
    assert status == 502
    assert answer["error"] == (
        "Receco service unavailable (Internal server error); the sale was not queued because enableOfflineMode is false"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"items": SALE["items"], "totalAmount": 1},
            "Missing required field(s): merchantId",
        ),
        (
            {"merchantId": "test-shop", "totalAmount": 1},
            "Missing required field(s): items",
        ),
        (
            {"merchantId": "test-shop", "items": SALE["items"]},
            "Missing required field(s): totalAmount",
        ),
        (
            {**SALE, "totalAmount": "3000"},
            "totalAmount must be an integer >= 0 (minor currency units)",
        ),
    ],
)
def test_invalid_sales_are_400(agent_server, fake_service, body, message):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", body)
    assert (status, answer) == (400, {"status": "error", "error": message})
    assert fake_service.requests == []
    assert agent_server.agent.outbox.summary()["pending"] == 0


def test_bad_json_is_400(agent_server):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", None, raw=b'{"merchantId": ')
    assert (status, answer) == (
        400,
        {"status": "error", "error": "Request body is not valid JSON"},
    )


def raw_request(port: int, head: str) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head_part, _, body = data.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), json.loads(body)


def test_oversized_body_is_400_without_reading_it(agent_server):
    port = agent_server.agent.settings.port
    status, answer = raw_request(
        port,
        f"POST /transactions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1048577\r\n\r\n",
    )
    assert (status, answer) == (
        400,
        {"status": "error", "error": "Request body is larger than 1048576 bytes"},
    )


def test_missing_content_length_is_400(agent_server):
    port = agent_server.agent.settings.port
    status, answer = raw_request(
        port,
        "POST /transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\r\n",
    )
    assert (status, answer) == (
        400,
        {"status": "error", "error": "Content-Length header is required"},
    )


def test_other_content_types_are_refused(agent_server):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE, headers={"Content-Type": "text/plain"})
    assert (status, answer) == (
        415,
        {"status": "error", "error": "Content-Type must be application/json"},
    )


def test_foreign_host_names_are_refused(agent_server):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE, headers={"Host": "evil.example"})
    assert (status, answer) == (
        400,
        {
            "status": "error",
            "error": "Unexpected Host header 'evil.example': use 127.0.0.1 or localhost",
        },
    )


def test_unknown_path_is_404(agent_server):
    status, answer, _ = post_json(f"{agent_server.url}/transaction", SALE)
    assert (status, answer) == (
        404,
        {"status": "error", "error": "No such endpoint: POST /transaction"},
    )


def test_health(offline_agent):
    post_json(f"{offline_agent.url}/transactions", SALE)
    status, health = get_json(f"{offline_agent.url}/health")
    assert status == 200
    assert health["agent"] == "receco-agent"
    assert health["running"] is True
    assert health["online"] is False
    assert (health["pending"], health["failed"]) == (1, 0)
    assert health["last_success"] is None
    assert health["last_error"]["message"].endswith("Connection refused")
    assert health["merchantId"] == "test-shop"


def test_printed_qr_and_short_code(tmp_path, fake_service):
    import io

    from receco_agent.agent import Agent

    out = io.StringIO()
    agent = Agent(make_settings(tmp_path, fake_service.api_url, print_qr=True), out=out)
    status, answer = agent.accept(json.dumps(SALE).encode())
    assert status == 200
    text = out.getvalue()
    assert f"Short code: {answer['shortCode']}   total: ₦30.00\n{answer['receiptUrl']}\n" in text
    assert "█" in text


@pytest.mark.parametrize(
    ("currency", "total", "printed"),
    [
        (None, 100, "₦1.00"),
        ("JPY", 1500, "¥1,500"),
        ("KWD", 1234567, "KWD\u00a01,234.567"),
        ("XYZ", 5, "XYZ\u00a00.05"),
    ],
)
def test_the_printed_total_is_money_as_the_receipt_page_writes_it(tmp_path, fake_service, currency, total, printed):
    import io

    from receco_agent.agent import Agent

    out = io.StringIO()
    agent = Agent(make_settings(tmp_path, fake_service.api_url, print_qr=True), out=out)
    sale = {**SALE, "items": [{"name": "Tea", "quantity": 1, "unitPrice": total}], "totalAmount": total}
    sale.pop("currency")
    if currency:
        sale["currency"] = currency
    assert agent.accept(json.dumps(sale).encode())[0] == 200
    assert f"   total: {printed}\n" in out.getvalue()


def test_a_terminal_without_the_currency_symbol_gets_its_code(tmp_path, fake_service):
    import io

    from receco_agent.agent import Agent

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="cp437")  # a Windows console: block characters, no ₦
    agent = Agent(make_settings(tmp_path, fake_service.api_url, print_qr=True), out=out)
    status, answer = agent.accept(json.dumps(SALE).encode())
    assert status == 200
    text = raw.getvalue().decode("cp437")
    assert f"Short code: {answer['shortCode']}   total: NGN 30.00\n" in text
    assert "█" in text


def test_http_servers_own_errors_are_json_too(agent_server):
    port = agent_server.agent.settings.port
    status, answer = raw_request(port, f"PUT /transactions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n")
    assert (status, answer) == (501, {"status": "error", "error": "Unsupported method ('PUT')"})


def test_stop_waits_for_work_in_progress_and_refuses_new_work(agent_server):
    server = agent_server.server
    entered, release, result = threading.Event(), threading.Event(), []

    def work():
        with server.working():
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=work)
    worker.start()
    assert entered.wait(10)
    stopper = threading.Thread(target=lambda: result.append(server.stop(10)))
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive()
    release.set()
    stopper.join(10)
    worker.join(10)
    assert result == [True]
    with pytest.raises(Stopping), server.working():
        pass


def test_a_queue_error_after_the_upload_still_answers_the_pos(agent_server, fake_service, monkeypatch):
    outbox = agent_server.agent.outbox

    def broken(*args):
        raise OSError("disk I/O error")

    monkeypatch.setattr(outbox, "mark_done", broken)
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert (status, answer["status"], answer["queued"]) == (200, "success", True)
    monkeypatch.undo()
    assert [e.token for e in outbox.pending()] == [answer["receiptId"]]
    agent_server.agent.forwarder.drain()  # the replay confirms it; the service keeps one receipt
    assert outbox.get(answer["receiptId"]).state == "done"
    assert list(fake_service.receipts) == [answer["receiptId"]]


def test_a_retry_with_the_same_idempotency_key_answers_the_first_answer(agent_server, fake_service):
    headers = {"Idempotency-Key": "pos-42-sale-7"}
    first = post_json(f"{agent_server.url}/transactions", SALE, headers=headers)
    again = post_json(f"{agent_server.url}/transactions", SALE, headers=headers)
    assert (first[0], again[0]) == (200, 200)
    assert again[1] == first[1]
    assert len(fake_service.requests) == 1
    other = post_json(f"{agent_server.url}/transactions", SALE, headers={"Idempotency-Key": "pos-42-sale-8"})
    assert other[1]["receiptId"] != first[1]["receiptId"]


def test_a_key_reused_for_a_different_sale_is_refused(offline_agent):
    headers = {"Idempotency-Key": "pos-42-sale-7"}
    first = post_json(f"{offline_agent.url}/transactions", SALE, headers=headers)
    other = post_json(f"{offline_agent.url}/transactions", {**SALE, "totalAmount": 2999}, headers=headers)
    assert first[0] == 200
    assert other[:2] == (
        422,
        {
            "status": "error",
            "error": "This Idempotency-Key was first used for a different sale: a retry must send the same request "
            "again, and a new sale needs a new key",
        },
    )
    assert offline_agent.agent.outbox.summary()["pending"] == 1


def test_a_retry_spaced_and_ordered_otherwise_is_the_same_request(offline_agent):
    headers = {"Idempotency-Key": "pos-42-sale-7"}
    first = post_json(f"{offline_agent.url}/transactions", SALE, headers=headers)[1]
    raw = json.dumps(dict(reversed(SALE.items())), indent=2).encode()
    again = post_json(f"{offline_agent.url}/transactions", None, headers=headers, raw=raw)
    assert again[:2] == (200, first)


def test_a_refund_sent_with_a_sales_key_is_a_refund_of_its_own(offline_agent):
    headers = {"Idempotency-Key": "pos-42-7"}
    sale = post_json(f"{offline_agent.url}/transactions", SALE, headers=headers)[1]
    status, refund, _ = post_json(
        f"{offline_agent.url}/refunds", {"receiptId": sale["receiptId"], "amount": 500}, headers=headers
    )
    assert status == 200
    assert refund["receiptId"] != sale["receiptId"]
    assert (refund["refundOf"], refund["shortCode"], refund["queued"]) == (sale["receiptId"], None, True)
    outbox = offline_agent.agent.outbox
    assert json.loads(outbox.get(refund["receiptId"]).body)["amount"] == 500
    # And each is answered again for its own kind of request.
    assert post_json(f"{offline_agent.url}/transactions", SALE, headers=headers)[:2] == (200, sale)
    again = post_json(f"{offline_agent.url}/refunds", {"receiptId": sale["receiptId"], "amount": 500}, headers=headers)
    assert again[:2] == (200, refund)
    assert outbox.summary()["pending"] == 2


def test_a_key_reused_for_a_different_refund_is_refused(offline_agent):
    headers = {"Idempotency-Key": "r-1"}
    assert (
        post_json(f"{offline_agent.url}/refunds", {"receiptId": "rcpt_abc_123456", "amount": 500}, headers=headers)[0]
        == 200
    )
    other = post_json(f"{offline_agent.url}/refunds", {"receiptId": "rcpt_abc_123456", "amount": 600}, headers=headers)
    assert other[:2] == (
        422,
        {
            "status": "error",
            "error": "This Idempotency-Key was first used for a different refund: a retry must send the same "
            "request again, and a new refund needs a new key",
        },
    )


def test_a_transaction_id_in_the_body_is_an_idempotency_key_too(offline_agent):
    sale = {**SALE, "transactionId": "T-1001"}
    first = post_json(f"{offline_agent.url}/transactions", sale)[1]
    again = post_json(f"{offline_agent.url}/transactions", sale)[1]
    assert again == first
    assert first["queued"] is True
    assert offline_agent.agent.outbox.summary()["pending"] == 1


def test_a_key_kept_in_the_queue_survives_a_restart(tmp_path, closed_url):
    settings = make_settings(tmp_path / "home", closed_url)
    running = run_agent_server(settings, forwarder=False)
    try:
        first = post_json(f"{running.url}/transactions", SALE, headers={"Idempotency-Key": "k-1"})[1]
    finally:
        stop_agent_server(running)
    running = run_agent_server(settings, forwarder=False)
    try:
        again = post_json(f"{running.url}/transactions", SALE, headers={"Idempotency-Key": "k-1"})[1]
    finally:
        stop_agent_server(running)
    assert again == first


def test_a_sale_refused_by_the_service_may_be_sent_again_with_its_key(agent_server, fake_service):
    fake_service.script.append(Reply(404, error_envelope(404, "NOT_FOUND", "Merchant not found")))
    headers = {"Idempotency-Key": "k-404"}
    assert post_json(f"{agent_server.url}/transactions", SALE, headers=headers)[0] == 404
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE, headers=headers)
    assert (status, answer["status"]) == (200, "success")


def test_an_overlong_idempotency_key_is_400(agent_server):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE, headers={"Idempotency-Key": "k" * 201})
    assert (status, answer) == (400, {"status": "error", "error": "Idempotency-Key must be 1 to 200 characters"})


def test_a_burst_of_600_sales_from_64_threads_is_served_without_a_refusal(offline_agent):
    statuses: list[object] = []
    lock = threading.Lock()

    def ring_up(count: int) -> None:
        for _ in range(count):
            try:
                result = post_json(f"{offline_agent.url}/transactions", SALE)[0]
            except OSError as exc:
                result = repr(exc)
            with lock:
                statuses.append(result)

    threads = [threading.Thread(target=ring_up, args=(10 if i < 24 else 9,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert len(statuses) == 600
    assert [s for s in statuses if s != 200] == []
    assert offline_agent.agent.outbox.summary()["pending"] == 600


def test_a_sale_for_another_merchant_is_400(agent_server, fake_service):
    status, answer, _ = post_json(f"{agent_server.url}/transactions", {**SALE, "merchantId": "shop-2"})
    assert (status, answer) == (
        400,
        {"status": "error", "error": "merchantId 'shop-2' is not the merchant this agent is set up for ('test-shop')"},
    )
    assert fake_service.requests == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"merchantName": "Mama\u0000Put"}, "merchantName must not contain NUL characters"),
        ({"location": "Lekki \ud800"}, "location must not contain a lone surrogate (U+D800)"),
        (
            {"items": [{"name": "Tea\udc00", "quantity": 1, "unitPrice": 1}]},
            "items[0].name must not contain a lone surrogate (U+DC00)",
        ),
        ({"cashierId": "c\u00007"}, "cashierId must not contain NUL characters"),
    ],
)
def test_text_the_service_would_refuse_gets_no_qr_code(offline_agent, change, message):
    raw = json.dumps({**SALE, **change}).replace("\\\\u", "\\u").encode()
    status, answer, _ = post_json(f"{offline_agent.url}/transactions", None, raw=raw)
    assert (status, answer) == (400, {"status": "error", "error": message})
    assert offline_agent.agent.outbox.summary()["pending"] == 0


def test_a_sale_too_large_for_the_service_once_encoded_gets_no_qr_code(offline_agent):
    # 500 items of characters that take 4 bytes in UTF-8 but 12 as a JSON escape: under
    # the agent's 1 MiB as the POS sends it, over the service's once encoded.
    items = [{"name": "\U0001f35b" * 200, "quantity": 1, "unitPrice": 1, "sku": "\U0001f35b" * 64}] * 500
    raw = json.dumps({**SALE, "items": items, "totalAmount": 500}, ensure_ascii=False).encode()
    assert len(raw) < 1024 * 1024
    status, answer, _ = post_json(f"{offline_agent.url}/transactions", None, raw=raw)
    assert status == 400
    assert re.fullmatch(
        r"The sale is \d+ bytes once encoded for the service, which accepts at most 1048576: send fewer or "
        r"shorter items",
        answer["error"],
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "receiptId must be the sale's receiptId (or its short code)"),
        (
            {"receiptId": "rcpt_abc_123456", "amount": 0},
            "amount must be an integer from 1 to 1000000000000000 (minor currency units)",
        ),
        (
            {"receiptId": "rcpt_abc_123456", "items": [{"index": -1, "quantity": 1}]},
            "items[0].index must be the item's place in the sale, from 0",
        ),
        (
            {"receiptId": "rcpt_abc_123456", "amount": 5, "items": [{"index": 0, "quantity": 1}]},
            "Give an amount or items to refund, not both",
        ),
        ({"receiptId": "rcpt_abc_123456", "reason": "x" * 201}, "reason must be a string of at most 200 characters"),
        ({"receiptId": "rcpt_abc_123456", "reason": "bad\u0000"}, "reason must not contain NUL characters"),
    ],
)
def test_invalid_refunds_are_400(offline_agent, body, message):
    status, answer, _ = post_json(f"{offline_agent.url}/refunds", body)
    assert (status, answer) == (400, {"status": "error", "error": message})
    assert offline_agent.agent.outbox.summary()["pending"] == 0


def test_a_refund_retried_with_its_key_answers_the_first_answer(offline_agent):
    body = {"receiptId": "rcpt_abc_123456", "amount": 500}
    first = post_json(f"{offline_agent.url}/refunds", body, headers={"Idempotency-Key": "r-1"})[1]
    again = post_json(f"{offline_agent.url}/refunds", body, headers={"Idempotency-Key": "r-1"})[1]
    assert (first["queued"], first["shortCode"], first["refundOf"]) == (True, None, "rcpt_abc_123456")
    assert again == first
    assert offline_agent.agent.outbox.summary()["pending"] == 1


def test_a_refund_by_short_code_of_a_queued_sale_waits_for_it_and_names_it_by_token(offline_agent):
    sale = post_json(f"{offline_agent.url}/transactions", SALE)[1]
    status, refund, _ = post_json(f"{offline_agent.url}/refunds", {"receiptId": sale["shortCode"].lower()})
    assert (status, refund["refundOf"], refund["queued"]) == (200, sale["receiptId"], True)
    outbox = offline_agent.agent.outbox
    assert json.loads(outbox.get(refund["receiptId"]).body)["token"] == sale["receiptId"]
    assert [entry.token for entry in outbox.pending()] == [sale["receiptId"]]  # the refund waits for its sale
    outbox.mark_done(sale["receiptId"], 1, sale["shortCode"])
    assert [entry.token for entry in outbox.pending()] == [refund["receiptId"]]


def test_a_refund_of_a_refused_sale_fails_with_it_and_is_retried_after_it(offline_agent):
    sale = post_json(f"{offline_agent.url}/transactions", SALE)[1]
    refund = post_json(f"{offline_agent.url}/refunds", {"receiptId": sale["shortCode"]})[1]
    outbox = offline_agent.agent.outbox
    outbox.mark_failed(sale["receiptId"], 404, "Merchant not found")
    failed = {item["token"]: item for item in outbox.summary()["failed_transactions"]}
    assert failed[refund["receiptId"]]["error"] == (
        f"Its sale {sale['receiptId']} was refused by the service: Merchant not found"
    )
    status, answer, _ = post_json(f"{offline_agent.url}/refunds", {"receiptId": sale["receiptId"]})
    assert (status, answer) == (
        409,
        {
            "status": "error",
            "error": f"The sale {sale['receiptId']} was refused by the service (Merchant not found), so it cannot "
            "be refunded",
        },
    )
    assert outbox.retry_failed() == 2
    assert [entry.token for entry in outbox.pending()] == [sale["receiptId"]]


@pytest.mark.parametrize("path", ["/transactions", "/refunds"])
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "Request body nests arrays and objects more than 64 deep"),
        (b'{"a":' * 500 + b"1" + b"}" * 500, "Request body nests arrays and objects more than 64 deep"),
        (
            b'{"totalAmount": ' + b"9" * 5000 + b', "amount": 1}',
            "Request body holds a number of more than 4300 digits; amounts are integers in minor units",
        ),
    ],
    ids=["100000-deep", "500-deep", "5000-digits"],
)
def test_bodies_that_python_cannot_read_are_400(offline_agent, path, raw, message):
    status, answer, _ = post_json(f"{offline_agent.url}{path}", None, raw=raw)
    assert (status, answer) == (400, {"status": "error", "error": message})


def test_a_logo_url_that_does_not_parse_is_400(offline_agent):
    for logo in ("http://[::1", "http://example.com:99999/logo.png"):
        status, answer, _ = post_json(f"{offline_agent.url}/transactions", {**SALE, "merchantLogo": logo})
        assert (status, answer) == (
            400,
            {"status": "error", "error": "merchantLogo must be an http:// or https:// URL"},
        )
    assert offline_agent.agent.outbox.summary()["pending"] == 0


def test_an_unexpected_failure_is_answered_500_not_a_closed_connection(offline_agent, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(offline_agent.agent, "accept", broken)
    status, answer, _ = post_json(f"{offline_agent.url}/transactions", SALE)
    assert (status, answer) == (
        500,
        {"status": "error", "error": "The agent failed on this request (KeyError); see its log"},
    )


def test_a_sale_made_while_a_backlog_drains_joins_the_queue_at_once(agent_server, fake_service, monkeypatch):
    monkeypatch.setattr(agent_server.agent.forwarder, "draining", lambda: True)
    status, answer, _ = post_json(f"{agent_server.url}/transactions", SALE)
    assert (status, answer["status"], answer["queued"]) == (200, "success", True)
    assert fake_service.requests == []
    assert agent_server.agent.outbox.get(answer["receiptId"]).state == "pending"


def test_a_sale_made_after_the_service_said_it_is_busy_joins_the_queue_at_once(agent_server, fake_service):
    fake_service.script.append(
        Reply(503, error_envelope(503, "SERVICE_UNAVAILABLE", "The service is busy"), {"Retry-After": "2"})
    )
    first = post_json(f"{agent_server.url}/transactions", SALE)[1]
    second = post_json(f"{agent_server.url}/transactions", {**SALE, "transactionId": "TX-after-503"})[1]
    assert (first["queued"], second["queued"]) == (True, True)
    assert fake_service.tokens() == [first["receiptId"]]  # the second never waited on the service
    assert agent_server.agent.outbox.summary()["pending"] == 2


def test_a_sale_made_after_a_slow_answer_joins_the_queue_and_the_pos_is_not_kept_waiting(agent_server, fake_service):
    def slowly(body):
        time.sleep(busy.SLOW_SECONDS + 0.2)
        return None  # then answered as usual

    fake_service.call = slowly
    first = post_json(f"{agent_server.url}/transactions", SALE)[1]
    fake_service.call = None
    status, answer, _ = post_json(f"{agent_server.url}/transactions", {**SALE, "transactionId": "TX-after-slow"})
    assert "queued" not in first  # confirmed by the service
    assert (status, answer["status"], answer["queued"]) == (200, "success", True)
    assert fake_service.tokens() == [first["receiptId"]]
    assert agent_server.agent.outbox.get(answer["receiptId"]).state == "pending"


def test_once_the_hold_has_passed_a_sale_goes_up_at_once_again(agent_server, fake_service, monkeypatch):
    monkeypatch.setattr(busy, "HOLD_SECONDS", 0.3)
    fake_service.script.append(Reply(503, error_envelope(503, "SERVICE_UNAVAILABLE", "The service is busy")))
    post_json(f"{agent_server.url}/transactions", SALE)
    assert post_json(f"{agent_server.url}/transactions", {**SALE, "transactionId": "TX-held"})[1]["queued"] is True
    time.sleep(0.4)
    answer = post_json(f"{agent_server.url}/transactions", {**SALE, "transactionId": "TX-later"})[1]
    assert "queued" not in answer  # confirmed by the service
    assert fake_service.tokens()[-1] == answer["receiptId"]
