"""NRS's e-invoicing API (the Merchant-Buyer Solution, MBS) on the wire: the one module
that knows its paths, headers and bodies. The rest of the service speaks of receipts.

It follows the public transcription of NRS's Postman collection (docs/einvoicing.md cites
it; it must be checked in NRS's sandbox before production): JSON bodies shaped after UBL,
every invoice call authenticated by the taxpayer's ``x-api-key`` and ``x-api-secret``
headers (``Client._authentication``, the one place), the code lists under
``/api/v1/invoice/resources/`` unauthenticated, and every answer an object
``{"code", "data", "message", "error": {"id", "handler", "details", "public_message"}}``.

A call either returns the answer's ``data`` or raises Refused (NRS refused the request:
sending it again cannot help) or Unavailable (no answer, or one that may change: try
again later). Each call, from connecting to the last byte, takes at most TIMEOUT.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import quote

import orjson

from einvoicing.invoices import Invoice, Supplier
from receco.lib.exchange import NoAnswer, exchange
from receipts.money import currency_info

TIMEOUT = 15.0  # seconds for a whole call
MAX_ANSWER_BYTES = 1 << 20
USER_AGENT = "Receco-EInvoicing/1.0"

VALIDATE = "/api/v1/invoice/validate"
SIGN = "/api/v1/invoice/sign"
CONFIRM = "/api/v1/invoice/confirm/{irn}"
UPDATE = "/api/v1/invoice/update/{irn}"
RESOURCES = "/api/v1/invoice/resources/{name}"

# The code lists the reports need (einvoicing.codes).
INVOICE_TYPES = "invoice-types"
PAYMENT_MEANS = "payment-means"
TAX_CATEGORIES = "tax-categories"

# payment_status: PENDING (the default), PAID or CANCELED. A till's sale is paid.
PAID = "PAID"
CANCELED = "CANCELED"

# Answers that may change if the same request is sent later; any other refusal is final.
_TRANSIENT = {408, 425, 429}


class Refused(Exception):
    """NRS refused the request (its message, and the HTTP status): sending it again cannot help."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Unavailable(Exception):
    """No answer from NRS, or one that may change: try again later."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Code:
    """An entry of one of NRS's code lists: its code and what it names."""

    code: str
    value: str


class Client:
    """NRS's API at ``base_url`` (RECECO_EINVOICING_URL), as one taxpayer."""

    def __init__(self, base_url: str, api_key: str, api_secret: str):
        self.base_url = base_url.rstrip("/")
        self._api_key, self._api_secret = api_key, api_secret

    def _authentication(self) -> dict[str, str]:
        """The headers that say which taxpayer calls: the collection's ``x-api-key`` and
        ``x-api-secret``, from the taxpayer's NRS dashboard."""
        return {"x-api-key": self._api_key, "x-api-secret": self._api_secret}

    def validate(self, body: dict) -> None:
        """Have NRS check an invoice body (``invoice_body``) without registering it."""
        self._call("POST", VALIDATE, body)

    def sign(self, body: dict) -> object:
        """Register (sign) an invoice body: the taxpayer's official submission. Returns
        what NRS answered with, its stamp."""
        return self._call("POST", SIGN, body)

    def confirm(self, irn: str) -> object | None:
        """What NRS holds of the invoice ``irn``, or None when it holds none."""
        return self._call("GET", CONFIRM.format(irn=quote(irn, safe="")), missing_ok=True)

    def cancel(self, irn: str) -> None:
        """Mark the invoice ``irn`` cancelled (its payment status CANCELED)."""
        self._call("PATCH", UPDATE.format(irn=quote(irn, safe="")), {"payment_status": CANCELED})

    def codes(self, name: str) -> list[Code]:
        """The code list ``name`` (INVOICE_TYPES, ...): ``{"code", "value"}`` entries."""
        data = self._call("GET", RESOURCES.format(name=name), authenticated=False)
        if not isinstance(data, list):
            raise Unavailable(f"NRS's {name} list is not a list")
        found = []
        for entry in data:
            if isinstance(entry, dict):
                code = entry.get("code", entry.get("id"))
                value = entry.get("value", entry.get("name", entry.get("description")))
                if code is not None and value is not None:
                    found.append(Code(str(code), str(value)))
        return found

    def _call(self, method: str, path: str, body: dict | None = None, *, authenticated=True, missing_ok=False):
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if authenticated:
            headers.update(self._authentication())
        content = orjson.dumps(body) if body is not None else None
        try:
            answer = exchange(
                method, self.base_url + path, content, headers, TIMEOUT, max_answer_bytes=MAX_ANSWER_BYTES
            )
        except NoAnswer as failure:
            raise Unavailable(f"NRS did not answer: {failure}") from None
        parsed = _json(answer.body)
        if 200 <= answer.status < 300:
            if not isinstance(parsed, dict):
                raise Unavailable(f"NRS answered HTTP {answer.status} without a JSON object", answer.status)
            return parsed.get("data")
        if answer.status == 404 and missing_ok:
            return None
        reason = _reason(parsed, answer.status)
        if answer.status in _TRANSIENT or answer.status >= 500:
            raise Unavailable(reason, answer.status)
        raise Refused(reason, answer.status)


def _json(content: bytes) -> object:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return None


def _reason(answer: object, status: int) -> str:
    """``NRS answered HTTP 400: validation failed: … (details)``, from the answer's error."""
    text = ""
    if isinstance(answer, dict):
        error = answer.get("error")
        if isinstance(error, dict):
            text = str(error.get("public_message") or "")
            details = error.get("details")
            if details:
                text = f"{text} ({details})" if text else str(details)
        if not text:
            text = str(answer.get("message") or "")
    return f"NRS answered HTTP {status}: {text}" if text else f"NRS answered HTTP {status}"


# --- Bodies ---------------------------------------------------------------------------


def invoice_body(
    invoice: Invoice,
    *,
    business_id: str,
    type_code: str,
    supplier: Supplier,
    payment_means: str | None,
    tax_categories: list[str],
) -> dict:
    """The body of ValidateInvoice and SignInvoice for ``invoice``: its type's code, the
    code of its payment means (None: left out) and the tax category of each of its taxes,
    in their order, from NRS's code lists (einvoicing.codes)."""

    def money(minor: int) -> float:
        return float(Decimal(minor).scaleb(-currency_info(invoice.currency).digits))

    day = invoice.issued.date().isoformat()
    taxed = sum(tax.amount for tax in invoice.taxes)
    body = {
        "business_id": business_id,
        "irn": invoice.irn,
        "issue_date": day,
        "issue_time": invoice.issued.strftime("%H:%M:%S"),
        "invoice_type_code": type_code,
        "payment_status": PAID,
        "document_currency_code": invoice.currency,
        "tax_currency_code": invoice.currency,
    }
    if invoice.billing:
        body["billing_reference"] = [{"irn": irn, "issue_date": issued.isoformat()} for irn, issued in invoice.billing]
    body["accounting_supplier_party"] = _party(supplier)
    if payment_means:
        body["payment_means"] = [{"payment_means_code": payment_means, "payment_due_date": day}]
    charges = [(False, invoice.discount), (True, invoice.tip)]
    allowances = [{"charge_indicator": charge, "amount": money(amount)} for charge, amount in charges if amount]
    if allowances:
        body["allowance_charge"] = allowances
    if invoice.taxes:
        body["tax_total"] = [
            {
                "tax_amount": money(taxed),
                "tax_subtotal": [
                    {
                        "taxable_amount": money(tax.taxable),
                        "tax_amount": money(tax.amount),
                        "tax_category": {"id": category, "percent": tax.rate},
                    }
                    for tax, category in zip(invoice.taxes, tax_categories, strict=True)
                ],
            }
        ]
    body["legal_monetary_total"] = {
        "line_extension_amount": money(sum(line.total for line in invoice.lines)),
        "tax_exclusive_amount": money(invoice.total - taxed),
        "tax_inclusive_amount": money(invoice.total),
        "payable_amount": money(invoice.total),
    }
    body["invoice_line"] = [
        {
            "invoiced_quantity": line.quantity,
            "line_extension_amount": money(line.total),
            "item": {
                "name": line.name,
                "description": line.name,
                **({"sellers_item_identification": line.sku} if line.sku else {}),
            },
            "price": {
                "price_amount": money(line.unit_price),
                "base_quantity": 1,
                "price_unit": f"{invoice.currency} per 1",
            },
        }
        for line in invoice.lines
    ]
    return body


def _party(supplier: Supplier) -> dict:
    party = {"party_name": supplier.name, "tin": supplier.tin, "email": supplier.email}
    if supplier.telephone:
        party["telephone"] = supplier.telephone
    party["postal_address"] = {
        "street_name": supplier.street,
        "city_name": supplier.city,
        "postal_zone": supplier.postal_zone,
        "country": supplier.country,
    }
    return party
