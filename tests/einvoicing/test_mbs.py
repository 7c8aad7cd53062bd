"""The wire format: every call as the collection shows it (path, method, headers), NRS's
answers read (its refusals final, its outages tried again), and every body the service
builds valid against the JSON Schema written from the collection."""

from datetime import date, datetime
from zoneinfo import ZoneInfo

import jsonschema
import pytest

from einvoicing import mbs
from einvoicing.invoices import Invoice, Line, Supplier, Tax
from tests.einvoicing.nrs import INVOICE_SCHEMA
from tests.servers import closed_port

LAGOS = ZoneInfo("Africa/Lagos")
SUPPLIER = Supplier(
    "Mama Put Foods Ltd", "29445920-4211", "hello@mamaput.example", "+2348031234567", "12 Admiralty Way", "Lagos",
    "106104", "NG",
)  # fmt: skip


def _invoice(irn="MP2026000001-94ND90NR-20261122", **overrides) -> Invoice:
    values = {
        "irn": irn,
        "credit_note": False,
        "currency": "NGN",
        "issued": datetime(2026, 11, 22, 11, 15, tzinfo=LAGOS),
        "lines": [Line("Jollof rice", 2, 50000, 100000, "JR-1"), Line("Chapman", 1, 30000, 30000, None)],
        "taxes": [],
        "discount": 0,
        "tip": 0,
        "total": 130000,
        "payment_method": "card",
        "billing": [],
    }
    return Invoice(**{**values, **overrides})


def _body(invoice: Invoice, categories=(), payment_means="43") -> dict:
    return mbs.invoice_body(
        invoice,
        business_id="800a1faf-4b81-4b6e-bbe0-cfeb6ca31d4a",
        type_code="381",
        supplier=SUPPLIER,
        payment_means=payment_means,
        tax_categories=list(categories),
    )


def _client(nrs, taxpayer, secret=None) -> mbs.Client:
    return mbs.Client(nrs.url, taxpayer.api_key, secret or taxpayer.api_secret)


def test_a_sales_body_states_its_lines_totals_and_supplier():
    body = _body(_invoice())
    jsonschema.validate(body, INVOICE_SCHEMA)
    assert body["issue_date"] == "2026-11-22"
    assert body["issue_time"] == "11:15:00"
    assert (body["payment_status"], body["document_currency_code"], body["tax_currency_code"]) == ("PAID", "NGN", "NGN")
    assert body["legal_monetary_total"] == {
        "line_extension_amount": 1300.0,
        "tax_exclusive_amount": 1300.0,
        "tax_inclusive_amount": 1300.0,
        "payable_amount": 1300.0,
    }
    assert body["invoice_line"][0] == {
        "invoiced_quantity": 2,
        "line_extension_amount": 1000.0,
        "item": {"name": "Jollof rice", "description": "Jollof rice", "sellers_item_identification": "JR-1"},
        "price": {"price_amount": 500.0, "base_quantity": 1, "price_unit": "NGN per 1"},
    }
    assert body["accounting_supplier_party"]["postal_address"] == {
        "street_name": "12 Admiralty Way",
        "city_name": "Lagos",
        "postal_zone": "106104",
        "country": "NG",
    }
    assert body["payment_means"] == [{"payment_means_code": "43", "payment_due_date": "2026-11-22"}]
    assert "accounting_customer_party" not in body  # a sale to a consumer: nothing of the customer


@pytest.mark.parametrize(
    "invoice",
    [
        _invoice(taxes=[Tax("VAT", 7.5, 120930, 9070)], discount=5000, tip=5000, total=130000, payment_method=None),
        _invoice(taxes=[Tax("VAT", 7.5, 130000, 9750), Tax("Consumption tax", 5, 130000, 6500)], total=146250),
        _invoice(
            "MP2026000002-94ND90NR-20261123",
            credit_note=True,
            lines=[Line("Refund of receipt K7P2QX", 1, 1999, 1999, None)],
            taxes=[Tax("VAT", 7.5, 1859, 140)],
            total=1999,
            billing=[("MP2026000001-94ND90NR-20261122", date(2026, 11, 22))],
        ),
        _invoice(currency="JPY", lines=[Line("Ramen", 1, 1500, 1500, None)], total=1500),
    ],
)
def test_every_body_is_valid_against_the_collections_schema(invoice):
    categories = ["STANDARD_VAT", "LOCAL_SALES_TAX"][: len(invoice.taxes)]
    body = _body(invoice, categories, payment_means=None if invoice.payment_method is None else "43")
    jsonschema.validate(body, INVOICE_SCHEMA)
    total = body["legal_monetary_total"]
    taxed = sum(tax.amount for tax in invoice.taxes) / 100 if invoice.currency == "NGN" else 0
    assert round(total["tax_inclusive_amount"] - total["tax_exclusive_amount"], 2) == taxed


def test_a_credit_note_refers_to_its_sales_invoice_and_a_discount_and_tip_are_an_allowance_and_a_charge():
    note = _body(_invoice(credit_note=True, billing=[("MP2026000001-94ND90NR-20261122", date(2026, 11, 22))]))
    assert note["billing_reference"] == [{"irn": "MP2026000001-94ND90NR-20261122", "issue_date": "2026-11-22"}]
    sale = _body(_invoice(discount=5000, tip=2500, total=127500))
    assert sale["allowance_charge"] == [
        {"charge_indicator": False, "amount": 50.0},
        {"charge_indicator": True, "amount": 25.0},
    ]
    taxed = _body(_invoice(taxes=[Tax("VAT", 7.5, 120930, 9070)]), ["STANDARD_VAT"])
    assert taxed["tax_total"] == [
        {
            "tax_amount": 90.7,
            "tax_subtotal": [
                {"taxable_amount": 1209.3, "tax_amount": 90.7, "tax_category": {"id": "STANDARD_VAT", "percent": 7.5}}
            ],
        }
    ]


def test_the_invoice_calls_carry_the_taxpayers_key_and_secret_and_the_code_lists_none(nrs, taxpayer):
    client = _client(nrs, taxpayer)
    body = _body(_invoice(irn=f"MP2026000001-{taxpayer.service_id}-20261122"))
    client.validate(body)
    assert client.sign(body) == nrs.invoices[body["irn"]].stamp
    assert client.confirm(body["irn"])["payment_status"] == "PAID"
    client.cancel(body["irn"])
    assert [code.code for code in client.codes(mbs.INVOICE_TYPES)][:2] == ["380", "381"]
    assert nrs.paths() == [
        ("POST", "/api/v1/invoice/validate"),
        ("POST", "/api/v1/invoice/sign"),
        ("GET", f"/api/v1/invoice/confirm/{body['irn']}"),
        ("PATCH", f"/api/v1/invoice/update/{body['irn']}"),
        ("GET", "/api/v1/invoice/resources/invoice-types"),
    ]
    validate, sign, confirm, update, codes = nrs.calls
    for call in (validate, sign, confirm, update):
        assert (call.headers["x-api-key"], call.headers["x-api-secret"]) == (taxpayer.api_key, taxpayer.api_secret)
        assert "authorization" not in call.headers
    assert "x-api-key" not in codes.headers
    assert "x-api-secret" not in codes.headers
    assert validate.headers["content-type"] == "application/json"
    assert validate.body == sign.body == body
    assert update.body == {"payment_status": "CANCELED"}
    assert (sign.status, confirm.status, update.status) == (201, 200, 200)
    assert nrs.invoices[body["irn"]].payment_status == "CANCELED"


def test_a_wrong_secret_is_refused_as_nrs_refuses_it(nrs, taxpayer):
    with pytest.raises(mbs.Refused) as refused:
        _client(nrs, taxpayer, secret="wrong").validate(_body(_invoice()))
    assert (str(refused.value), refused.value.status) == ("NRS answered HTTP 400: unable to validate api key", 400)


def test_an_invalid_invoice_is_refused_with_nrss_message_and_details(nrs, taxpayer):
    body = _body(_invoice(irn="MP2026000001-WRONGSID-20261122"))
    with pytest.raises(mbs.Refused) as refused:
        _client(nrs, taxpayer).validate(body)
    assert str(refused.value) == (
        "NRS answered HTTP 400: validation failed: we are unable to process your request. also confirm this is not "
        "a duplicate request (irn MP2026000001-WRONGSID-20261122 does not follow the template "
        "{invoice_id}-94ND90NR-{YYYYMMDD})"
    )


def test_an_outage_or_a_busy_nrs_is_to_be_tried_again(nrs, taxpayer):
    nrs.fail("/api/v1/invoice/validate", 503)
    nrs.fail("/api/v1/invoice/sign", 429)
    client = _client(nrs, taxpayer)
    body = _body(_invoice(irn=f"MP2026000001-{taxpayer.service_id}-20261122"))
    with pytest.raises(mbs.Unavailable, match="^NRS answered HTTP 503: service unavailable$"):
        client.validate(body)
    with pytest.raises(mbs.Unavailable, match="^NRS answered HTTP 429"):
        client.sign(body)
    with closed_port() as port, pytest.raises(mbs.Unavailable, match="^NRS did not answer: ConnectionRefusedError"):
        mbs.Client(f"http://127.0.0.1:{port}", "k", "s").validate(body)


def test_an_invoice_nrs_does_not_hold_confirms_as_none(nrs, taxpayer):
    assert _client(nrs, taxpayer).confirm("MP2026000009-94ND90NR-20261122") is None
    assert nrs.calls[-1].status == 404
