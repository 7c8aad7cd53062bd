"""A double of NRS's e-invoicing API (MBS) on 127.0.0.1, for the tests and the benchmark:
NRS cannot be reached from here. It speaks the public transcription of NRS's Postman
collection (docs/einvoicing.md cites it), and keeps every call it received.

What the transcription shows, the double does exactly: the paths and methods; the
``x-api-key`` and ``x-api-secret`` headers on every invoice call, and its refusal of wrong
ones (HTTP 400, public_message "unable to validate api key"); the code lists under
``/api/v1/invoice/resources/`` without authentication, the invoice types as NRS's sandbox
lists them; the error body ``{"code", "data": null, "message": "error has occurred",
"error": {"id", "handler", "details", "public_message"}}``; 404 "no route found …" for
any other path.

What it does not show, the double decides, and docs/einvoicing.md lists it as unconfirmed:
the bodies of successful answers (``{"code": 200, "data": {...}}``, SignInvoice 201 with a
stamp), the payment means and tax categories lists, and its checks of a body beyond the
JSON Schema written from the collection (mbs_invoice.schema.json): the IRN's template
(the taxpayer's service id, the issue date), the business id, the invoice type code, a
credit note's billing reference to an invoice it signed, an IRN signed only once, and
totals that add up.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jsonschema
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.background import serve_in_background

HERE = Path(__file__).resolve().parent
INVOICE_SCHEMA = json.loads((HERE / "mbs_invoice.schema.json").read_text())
UPDATE_SCHEMA = json.loads((HERE / "mbs_update.schema.json").read_text())

# GetInvoiceTypes as NRS's sandbox answered it (the transcription, docs/FIRS-MBS_E-Invoicing_Documentation.md).
INVOICE_TYPES = [
    {"code": code, "value": value}
    for code, value in [
        ("380", "Credit Note"), ("381", "Commercial Invoice"), ("384", "Debit Note"), ("385", "Self Billed Invoice"),
        ("386", "Factored Invoice"), ("388", "Statement of Account"), ("389", "Purchase Order"),
        ("390", "Proforma Invoice"), ("392", "Consignment Invoice"), ("393", "Self-billed Credit Note"),
        ("394", "Self-billed Invoice"), ("395", "Credit Note Request"), ("396", "Invoice Request"),
        ("397", "Final Settlement"), ("399", "Bill of Lading"), ("400", "Waybill"), ("402", "Shipping Instructions"),
        ("404", "Certificate of Origin"), ("406", "Customs Declaration"), ("408", "Packing List"),
    ]
]  # fmt: skip
# The transcription shows neither list's answer: the double's own, in the same {code, value}
# shape, with the codes the collection's example uses (payment means 10 and 43, LOCAL_SALES_TAX).
PAYMENT_MEANS = [
    {"code": code, "value": value}
    for code, value in [("10", "Cash"), ("30", "Credit transfer"), ("43", "Bank card"), ("49", "Direct debit")]
]
TAX_CATEGORIES = [
    {"code": code, "value": value}
    for code, value in [
        ("STANDARD_VAT", "Standard value-added tax"), ("REDUCED_VAT", "Reduced value-added tax"),
        ("ZERO_VAT", "Zero value-added tax"), ("STANDARD_GST", "Standard goods and services tax"),
        ("LOCAL_SALES_TAX", "Local sales tax"), ("ALCOHOL_EXCISE_TAX", "Alcohol excise tax"),
    ]
]  # fmt: skip
RESOURCES = {"invoice-types": INVOICE_TYPES, "payment-means": PAYMENT_MEANS, "tax-categories": TAX_CATEGORIES}

API_KEY_REFUSED = "unable to validate api key"
VALIDATION_FAILED = (
    "validation failed: we are unable to process your request. also confirm this is not a duplicate request"
)
NO_ROUTE = "no route found for this path. kindly check your request and try again"


@dataclass(frozen=True)
class Taxpayer:
    """What NRS knows a business by: its dashboard's API key and secret, its business id and service id."""

    api_key: str
    api_secret: str
    business_id: str
    service_id: str


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: object  # the JSON received, or None
    status: int = 0  # what the double answered
    at: float = field(default_factory=time.monotonic)  # when it was answered


@dataclass
class _Invoice:
    body: dict
    payment_status: str
    stamp: dict = field(default_factory=dict)


class NRSDouble:
    """NRS's API for ``taxpayer`` on 127.0.0.1 (``url``). ``calls`` keeps every request in
    the order received; ``invoices`` the invoices signed, by IRN. ``refuse(irn, details)``
    makes it refuse that invoice as NRS refuses an invalid one; ``fail(path, status,
    times)`` answers the next ``times`` requests whose path starts so with ``status``.
    ``latency`` (seconds) delays every answer, as NRS's distance would."""

    def __init__(self, taxpayer: Taxpayer, latency: float = 0.0):
        self.taxpayer = taxpayer
        self.latency = latency
        self.calls: list[Call] = []
        self.invoices: dict[str, _Invoice] = {}
        self.refusals: dict[str, str] = {}
        self.failures: list[list] = []
        self._lock = threading.Lock()
        self._signer = Ed25519PrivateKey.generate()
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                call = Call(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                status, answer = double._answer(call)
                call.status = status
                content = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_PATCH = _handle

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.close = serve_in_background(self.server)

    def refuse(self, irn: str, details: str) -> None:
        self.refusals[irn] = details

    def fail(self, path: str, status: int, times: int = 1) -> None:
        self.failures.append([path, status, times])

    def paths(self) -> list[tuple[str, str]]:
        """(method, path) of each call received, in order."""
        return [(call.method, call.path) for call in self.calls]

    # --- answering -----------------------------------------------------------------------

    def _answer(self, call: Call) -> tuple[int, dict]:
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            call.at = time.monotonic()
            self.calls.append(call)
            for failure in self.failures:
                if call.path.startswith(failure[0]) and failure[2] > 0:
                    failure[2] -= 1
                    return failure[1], _error(failure[1], "handler", None, "service unavailable")
            return self._route(call)

    def _route(self, call: Call) -> tuple[int, dict]:
        path = urlsplit(call.path).path
        if (call.method, path) == ("GET", "/api"):
            return 200, {"healthy": True}
        resource = re.fullmatch(r"/api/v1/invoice/resources/([a-z-]+)", path)
        if call.method == "GET" and resource and resource[1] in RESOURCES:
            return 200, {"code": 200, "data": RESOURCES[resource[1]]}
        routes = [
            ("POST", r"/api/v1/invoice/validate", self._validate),
            ("POST", r"/api/v1/invoice/sign", self._sign),
            ("GET", r"/api/v1/invoice/confirm/([^/]+)", self._confirm),
            ("PATCH", r"/api/v1/invoice/update/([^/]+)", self._update),
        ]
        for method, pattern, answer in routes:
            found = re.fullmatch(pattern, path)
            if found and call.method == method:
                if not self._authenticated(call):
                    return 400, _error(400, "handler", None, API_KEY_REFUSED)
                return answer(call, *(unquote(group) for group in found.groups()))
        return 404, {"code": 404, "data": None, "message": NO_ROUTE}

    def _authenticated(self, call: Call) -> bool:
        taxpayer = self.taxpayer
        return (call.headers.get("x-api-key"), call.headers.get("x-api-secret")) == (
            taxpayer.api_key,
            taxpayer.api_secret,
        )

    def _validate(self, call: Call) -> tuple[int, dict]:
        problem = self._problem(call.body)
        if problem:
            return 400, _error(400, "invoice_actions", problem)
        return 200, {"code": 200, "data": {"ok": True}}

    def _sign(self, call: Call) -> tuple[int, dict]:
        problem = self._problem(call.body)
        if problem is None and call.body["irn"] in self.invoices:
            problem = f"irn {call.body['irn']} is already signed"
        if problem:
            return 400, _error(400, "invoice_actions", problem)
        irn = call.body["irn"]
        signature = self._signer.sign(json.dumps(call.body, sort_keys=True).encode())
        stamp = {"irn": irn, "csid": base64.b64encode(signature).decode()}
        self.invoices[irn] = _Invoice(call.body, call.body.get("payment_status", "PENDING"), stamp)
        return 201, {"code": 201, "data": stamp}

    def _confirm(self, call: Call, irn: str) -> tuple[int, dict]:
        invoice = self.invoices.get(irn)
        if invoice is None:
            return 404, _error(404, "invoice_actions", f"irn {irn} not found", "invoice not found")
        data = {
            "irn": irn,
            "business_id": invoice.body["business_id"],
            "issue_date": invoice.body["issue_date"],
            "payment_status": invoice.payment_status,
            "transmitted": False,
            "delivered": False,
        }
        return 200, {"code": 200, "data": data}

    def _update(self, call: Call, irn: str) -> tuple[int, dict]:
        invoice = self.invoices.get(irn)
        if invoice is None:
            return 404, _error(404, "invoice_actions", f"irn {irn} not found", "invoice not found")
        errors = _schema_errors(UPDATE_SCHEMA, call.body)
        if errors:
            return 400, _error(400, "invoice_actions", errors)
        invoice.payment_status = call.body["payment_status"]
        return 200, {"code": 200, "data": {"ok": True}}

    def _problem(self, body: object) -> str | None:
        """Why NRS would refuse ``body``, or None."""
        errors = _schema_errors(INVOICE_SCHEMA, body)
        if errors:
            return errors
        taxpayer, irn = self.taxpayer, body["irn"]
        if body["business_id"] != taxpayer.business_id:
            return f"business_id {body['business_id']} is not the business of this api key"
        number, service_id, day = irn.split("-")
        if service_id != taxpayer.service_id:
            return f"irn {irn} does not follow the template {{invoice_id}}-{taxpayer.service_id}-{{YYYYMMDD}}"
        if day != body["issue_date"].replace("-", ""):
            return f"irn {irn} is not dated its issue_date {body['issue_date']}"
        if body["invoice_type_code"] not in {entry["code"] for entry in INVOICE_TYPES}:
            return f"invoice_type_code {body['invoice_type_code']} is not an invoice type"
        for reference in body.get("billing_reference", []):
            if reference["irn"] not in self.invoices:
                return f"billing_reference irn {reference['irn']} not found"
        if irn in self.refusals:
            return self.refusals[irn]
        return _totals_problem(body)


def _totals_problem(body: dict) -> str | None:
    total = body["legal_monetary_total"]

    def sums(values) -> Decimal:
        return sum((Decimal(str(value)) for value in values), Decimal(0))

    taxed = sums(entry["tax_amount"] for entry in body.get("tax_total", []))
    subtotals = sums(sub["tax_amount"] for entry in body.get("tax_total", []) for sub in entry["tax_subtotal"])
    lines = sums(line["line_extension_amount"] for line in body["invoice_line"])
    if taxed != subtotals:
        return "tax_total.tax_amount is not the sum of its tax_subtotal"
    if Decimal(str(total["tax_inclusive_amount"])) - Decimal(str(total["tax_exclusive_amount"])) != taxed:
        return "tax_inclusive_amount - tax_exclusive_amount is not tax_total.tax_amount"
    if Decimal(str(total["payable_amount"])) != Decimal(str(total["tax_inclusive_amount"])):
        return "payable_amount is not tax_inclusive_amount"
    if Decimal(str(total["line_extension_amount"])) != lines:
        return "line_extension_amount is not the sum of the invoice_line"
    return None


def _schema_errors(schema: dict, body: object) -> str | None:
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(body), key=lambda error: list(error.path))
    if not errors:
        return None
    return "; ".join(f"{'.'.join(str(part) for part in error.path) or 'body'}: {error.message}" for error in errors)


def _error(status: int, handler: str, details: str | None, public_message: str = VALIDATION_FAILED) -> dict:
    error = {"id": str(uuid.uuid4()), "handler": handler, "public_message": public_message}
    if details:
        error["details"] = details
    return {"code": status, "data": None, "message": "error has occurred", "error": error}
