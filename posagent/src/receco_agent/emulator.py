"""The POS emulator: POST /test-transaction turns a simple sale into an agent
transaction and forwards it to the agent; GET / is a small till page to ring up sales by
hand. Everything is served from this package: no CDN, so it works offline too."""

import html
import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources

from receco_agent.httputil import Handler, Server, Stopping
from receco_agent.money import DEFAULT_CURRENCY, currency_info
from receco_agent.transactions import InvalidTransaction, decode_json, iso_utc

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
FORWARD_TIMEOUT = 30.0
_STATIC = {"/till.js": "application/javascript", "/till.css": "text/css"}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class InvalidSale(ValueError):
    """The emulator's input is not a sale; the message says what is wrong."""


@dataclass(frozen=True)
class Till:
    """Who the emulated till sells for and where its agent listens."""

    agent_url: str
    merchant_id: str
    merchant_name: str | None = None
    currency: str | None = None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def to_transaction(sale: object, till: Till, now: datetime | None = None) -> dict:
    """Return the agent transaction (as a POS sends it) of an emulator sale.

    ``price`` is the unit price in minor units; ``total`` defaults to the sum of the lines.
    Raises InvalidSale naming the offending field.
    """
    if not isinstance(sale, dict):
        raise InvalidSale("Request body must be a JSON object")
    items = sale.get("items")
    if not isinstance(items, list) or not items:
        raise InvalidSale("items must be a non-empty array")
    lines = []
    for index, item in enumerate(items):
        where = f"items[{index}]"
        if not isinstance(item, dict):
            raise InvalidSale(f"{where} must be an object")
        name, quantity, price = (
            item.get("name"),
            item.get("quantity"),
            item.get("price"),
        )
        if not isinstance(name, str) or not name.strip():
            raise InvalidSale(f"{where}.name must be a non-empty string")
        if not _is_int(quantity) or quantity < 1:
            raise InvalidSale(f"{where}.quantity must be an integer >= 1")
        if not _is_int(price) or price < 0:
            raise InvalidSale(f"{where}.price must be an integer >= 0 (minor currency units)")
        lines.append(
            {
                "name": name.strip(),
                "quantity": quantity,
                "unitPrice": price,
                "totalPrice": quantity * price,
            }
        )
    total = sale.get("total", sum(line["totalPrice"] for line in lines))
    if not _is_int(total) or total < 0:
        raise InvalidSale("total must be an integer >= 0 (minor currency units)")
    payment = sale.get("paymentMethod", "card")
    if not isinstance(payment, str) or not payment.strip():
        raise InvalidSale("paymentMethod must be a non-empty string")
    transaction = {
        "merchantId": till.merchant_id,
        "items": lines,
        "totalAmount": total,
        "paymentMethod": payment.strip(),
        "timestamp": iso_utc(now or datetime.now(UTC)),
        "terminalId": "emulator",
    }
    if till.merchant_name:
        transaction["merchantName"] = till.merchant_name
    if till.currency:
        transaction["currency"] = till.currency
    return transaction


def forward(agent_url: str, transaction: dict, timeout: float = FORWARD_TIMEOUT) -> tuple[int, dict]:
    """POST ``transaction`` to the agent; return its (status, JSON answer).

    When the agent cannot be reached, returns 502 with an error saying how to start it.
    """
    request = urllib.request.Request(  # noqa: S310 (agent URL is checked as http/https)
        f"{agent_url}/transactions",
        data=json.dumps(transaction).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (agent URL is checked as http/https)
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return 502, {
            "status": "error",
            "error": f"The agent at {agent_url} cannot be reached ({reason}); start it with 'receco-agent start'",
        }
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return 502, {
            "status": "error",
            "error": f"The agent at {agent_url} answered HTTP {status} without JSON",
        }
    return status, document


def _static(name: str) -> bytes:
    return resources.files("receco_agent").joinpath("static", name).read_bytes()


class EmulatorHandler(Handler):
    """Serves the till page and forwards test transactions."""

    server: "EmulatorServer"

    def do_GET(self) -> None:
        if not self.host_allowed():
            return
        path = self.path.split("?")[0]
        if path == "/":
            till = self.server.till
            page = _static("till.html").decode("utf-8")
            page = page.replace("{{merchant_name}}", html.escape(till.merchant_name or till.merchant_id))
            page = page.replace("{{merchant_id}}", html.escape(till.merchant_id))
            page = page.replace("{{agent_url}}", html.escape(till.agent_url))
            # Amounts are shown as the service's receipt pages write them (money.format_amount).
            currency = currency_info(till.currency or DEFAULT_CURRENCY)
            page = page.replace("{{currency_symbol}}", html.escape(currency.symbol))
            page = page.replace("{{currency_digits}}", str(currency.digits))
            self._send_file(page.encode("utf-8"), "text/html; charset=utf-8")
        elif path in _STATIC:
            self._send_file(_static(path.lstrip("/")), f"{_STATIC[path]}; charset=utf-8")
        else:
            self.send_error_json(404, f"No such page: {path}")

    def _send_file(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if not self.host_allowed():
            return
        if self.path.split("?")[0] != "/test-transaction":
            self.close_connection = True
            self.send_error_json(404, f"No such endpoint: POST {self.path.split('?')[0]}")
            return
        body = self.read_json_body(MAX_BODY_BYTES)
        if body is None:
            return
        try:
            transaction = to_transaction(decode_json(body), self.server.till)
        except (InvalidTransaction, InvalidSale) as exc:
            self.send_error_json(400, str(exc))
            return
        try:
            with self.server.working():
                status, answer = forward(self.server.till.agent_url, transaction)
                log.info("Emulator sale of %s forwarded: HTTP %s", transaction["totalAmount"], status)
                self.send_json(status, answer)
        except Stopping:
            self.close_connection = True
            self.send_error_json(503, "The emulator is stopping")


class EmulatorServer(Server):
    """The emulator's HTTP server."""

    def __init__(self, till: Till, host: str = "127.0.0.1", port: int = 3002):
        self.till = till
        super().__init__((host, port), EmulatorHandler)
