import re
from datetime import UTC, datetime
from urllib.request import urlopen

import pytest
from receco_agent.emulator import EmulatorServer, InvalidSale, Till, to_transaction

from tests.agent.support import free_port, post_json
from tests.background import serve_in_background

TILL = Till(agent_url="http://127.0.0.1:3001", merchant_id="test-till", merchant_name="Mama <b>Put</b> & Co")
NOW = datetime(2026, 11, 22, 10, 15, tzinfo=UTC)


def test_a_sale_becomes_an_agent_transaction():
    sale = {"items": [{"name": " Suya ", "quantity": 3, "price": 20000}], "total": 60000, "paymentMethod": "cash"}
    assert to_transaction(sale, TILL, NOW) == {
        "merchantId": "test-till",
        "merchantName": "Mama <b>Put</b> & Co",
        "items": [{"name": "Suya", "quantity": 3, "unitPrice": 20000, "totalPrice": 60000}],
        "totalAmount": 60000,
        "paymentMethod": "cash",
        "timestamp": "2026-11-22T10:15:00.000Z",
        "terminalId": "emulator",
    }


def test_total_and_payment_method_default():
    sale = {"items": [{"name": "A", "quantity": 2, "price": 5}, {"name": "B", "quantity": 1, "price": 7}]}
    transaction = to_transaction(sale, Till("http://x", "test-till", currency="NGN"), NOW)
    assert (transaction["totalAmount"], transaction["paymentMethod"], transaction["currency"]) == (17, "card", "NGN")
    assert "merchantName" not in transaction


@pytest.mark.parametrize(
    ("sale", "message"),
    [
        ([], "Request body must be a JSON object"),
        ({}, "items must be a non-empty array"),
        ({"items": [3]}, "items[0] must be an object"),
        ({"items": [{"name": "", "quantity": 1, "price": 1}]}, "items[0].name must be a non-empty string"),
        ({"items": [{"name": "A", "quantity": 0, "price": 1}]}, "items[0].quantity must be an integer >= 1"),
        (
            {"items": [{"name": "A", "quantity": 1, "price": 1.5}]},
            "items[0].price must be an integer >= 0 (minor currency units)",
        ),
        (
            {"items": [{"name": "A", "quantity": 1, "price": 1}], "total": "1"},
            "total must be an integer >= 0 (minor currency units)",
        ),
        (
            {"items": [{"name": "A", "quantity": 1, "price": 1}], "paymentMethod": 4},
            "paymentMethod must be a non-empty string",
        ),
    ],
)
def test_invalid_sales(sale, message):
    with pytest.raises(InvalidSale) as info:
        to_transaction(sale, TILL, NOW)
    assert str(info.value) == message


@pytest.fixture
def emulator(agent_server):
    till = Till(agent_server.url, "test-shop", "Mama <b>Put</b> & Co")
    server = EmulatorServer(till, port=free_port())
    stop = serve_in_background(server)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    stop()


def test_test_transaction_is_forwarded_and_the_agents_answer_returned(emulator, fake_service):
    status, answer, _ = post_json(
        f"{emulator}/test-transaction", {"items": [{"name": "Suya", "quantity": 3, "price": 20000}], "total": 60000}
    )
    assert (status, answer["status"]) == (200, "success")
    sent = fake_service.requests[0]["json"]
    assert sent["token"] == answer["receiptId"]
    assert sent["short_code"] == answer["shortCode"]
    assert sent["merchant_string_id"] == "test-shop"
    assert sent["items"] == [{"name": "Suya", "quantity": 3, "unit_price": 20000, "total_price": 60000}]
    assert (sent["total_amount"], sent["payment_method"]) == (60000, "card")


def test_the_agents_refusal_is_passed_on(emulator, fake_service):
    from tests.agent.support import Reply, error_envelope

    fake_service.script.append(Reply(403, error_envelope(403, "FORBIDDEN", "Merchant account is suspended")))
    status, answer, _ = post_json(f"{emulator}/test-transaction", {"items": [{"name": "A", "quantity": 1, "price": 1}]})
    assert (status, answer) == (403, {"status": "error", "error": "Merchant account is suspended", "code": "FORBIDDEN"})


def test_an_invalid_sale_is_400(emulator, fake_service):
    status, answer, _ = post_json(f"{emulator}/test-transaction", {"items": []})
    assert (status, answer) == (400, {"status": "error", "error": "items must be a non-empty array"})
    status, answer, _ = post_json(f"{emulator}/test-transaction", None, raw=b"{")
    assert (status, answer) == (400, {"status": "error", "error": "Request body is not valid JSON"})
    status, answer, _ = post_json(f"{emulator}/test-transaction", None, raw=b"[" * 100_000 + b"]" * 100_000)
    assert (status, answer) == (
        400,
        {"status": "error", "error": "Request body nests arrays and objects more than 64 deep"},
    )
    status, answer, _ = post_json(f"{emulator}/test-transaction", None, raw=b'{"total": ' + b"1" * 5000 + b"}")
    assert status == 400
    assert answer["error"].startswith("Request body holds a number of more than 4300 digits")
    assert fake_service.requests == []


@pytest.mark.parametrize(
    ("currency", "symbol", "digits"), [(None, "₦", "2"), ("JPY", "¥", "0"), ("KWD", "KWD\u00a0", "3")]
)
def test_the_till_page_writes_amounts_in_the_tills_currency(currency, symbol, digits):
    server = EmulatorServer(Till("http://127.0.0.1:1", "test-till", currency=currency), port=free_port())
    stop = serve_in_background(server)
    try:
        with urlopen(f"http://127.0.0.1:{server.server_address[1]}/", timeout=10) as response:
            page = response.read().decode()
    finally:
        stop()
    assert f'<body data-currency-symbol="{symbol}" data-currency-digits="{digits}">' in page


def test_an_unreachable_agent_is_502():
    agent_url = f"http://127.0.0.1:{free_port()}"
    server = EmulatorServer(Till(agent_url, "test-shop"), port=free_port())
    stop = serve_in_background(server)
    try:
        status, answer, _ = post_json(
            f"http://127.0.0.1:{server.server_address[1]}/test-transaction",
            {"items": [{"name": "A", "quantity": 1, "price": 1}]},
        )
    finally:
        stop()
    assert status == 502
    assert answer == {
        "status": "error",
        "error": f"The agent at {agent_url} cannot be reached ([Errno 111] Connection refused); "
        "start it with 'receco-agent start'",
    }


def test_the_till_page_is_self_contained_and_escapes_merchant_text(emulator):
    with urlopen(f"{emulator}/", timeout=10) as response:
        page = response.read().decode()
        headers = response.headers
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "img-src data:" in headers["Content-Security-Policy"]
    assert "<h1>Mama &lt;b&gt;Put&lt;/b&gt; &amp; Co</h1>" in page
    assert "<b>Put</b>" not in page
    assert '<script src="/till.js"></script>' in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing loaded from elsewhere
    for asset, kind in (("/till.js", "application/javascript"), ("/till.css", "text/css")):
        with urlopen(f"{emulator}{asset}", timeout=10) as response:
            assert response.headers["Content-Type"] == f"{kind}; charset=utf-8"
            assert len(response.read()) > 500


def test_the_till_script_never_parses_text_as_html(emulator):
    with urlopen(f"{emulator}/till.js", timeout=10) as response:
        script = response.read().decode()
    assert "innerHTML" not in script
    assert "/test-transaction" in script
    assert 'startsWith("data:image/png;base64,")' in script
