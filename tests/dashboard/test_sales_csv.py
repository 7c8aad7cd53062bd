"""The dashboard's export of sales (dashboard.sales_csv): money as numbers a spreadsheet
sums, items as text, statuses and payment methods in words, a refund a row of its own, and
no cell that a spreadsheet would run as a formula."""

import csv
import io

import pytest

from dashboard.sales_csv import BOM, COLUMNS, items_text, lines
from receipts.models import Receipt
from receipts.refunds import refund, validate_refund, void

pytestmark = pytest.mark.django_db


def _records(receipts) -> list[dict]:
    text = "".join(lines(receipts))
    assert text.startswith(BOM)
    header, *rows = csv.reader(io.StringIO(text.removeprefix(BOM)))
    assert header == [name for name, _ in COLUMNS]
    return [dict(zip(header, row, strict=True)) for row in rows]


def test_a_sale_reads_as_money_items_and_words(receipt_factory):
    receipt_factory(total_amount=134000, payment_method="bank_transfer", items=[
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
        {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
        {"name": "Takeaway pack", "quantity": 2, "unit_price": 2000, "total_price": 4000},
    ])  # fmt: skip

    (record,) = _records(Receipt.objects.all())

    assert record["total_amount"] == "1340.00"
    assert record["total_amount_minor_units"] == "134000"
    assert record["currency"] == "NGN"
    assert record["items"] == "2 × Jollof rice @ 500.00; 1 × Chapman @ 300.00; 2 × Takeaway pack @ 20.00"
    assert record["status"] == "Completed"
    assert record["payment_method"] == "Bank transfer"
    assert record["refund_of"] == ""


def test_an_item_sold_below_its_price_shows_its_total(receipt_factory):
    sale = receipt_factory(total_amount=90000, items=[
        {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 90000}])  # fmt: skip

    assert items_text(sale) == "2 × Jollof rice @ 500.00 = 900.00"


def test_a_currency_without_minor_units_has_no_decimals(receipt_factory):
    receipt_factory(currency="JPY", total_amount=1500, items=[
        {"name": "Ramen", "quantity": 1, "unit_price": 1500, "total_price": 1500}])  # fmt: skip

    (record,) = _records(Receipt.objects.all())

    assert (record["total_amount"], record["total_amount_minor_units"], record["items"]) == (
        "1500",
        "1500",
        "1 × Ramen @ 1500",
    )


def test_a_refund_is_a_row_of_its_own_and_the_statuses_are_words(receipt_factory):
    sale = receipt_factory(token="rcpt_refunded1_aaaaa", short_code="SALE01")
    request = validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}], "reason": "Spilt"})
    made = refund(sale, request, keyed=True).receipt
    void(receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01"), "Rung up twice", keyed=True)

    records = {record["short_code"]: record for record in _records(Receipt.objects.all())}

    assert records["SALE01"]["status"] == "Partly refunded"
    assert records[made.short_code]["status"] == "Refund"
    assert records[made.short_code]["refund_of"] == "SALE01"
    assert records[made.short_code]["total_amount"] == "300.00"
    assert records["VOID01"]["status"] == "Voided"


def test_no_cell_runs_as_a_formula(receipt_factory):
    receipt_factory(
        location='=HYPERLINK("http://evil.example","x")',
        category="@SUM(1+1)",
        customer_phone="+2348031234567",
        total_amount=100,
        items=[{"name": "=1+1", "quantity": 1, "unit_price": 100, "total_price": 100}],
    )

    (record,) = _records(Receipt.objects.all())

    assert record["location"] == '\'=HYPERLINK("http://evil.example","x")'
    assert record["category"] == "'@SUM(1+1)"
    assert record["customer_phone"] == "'+2348031234567"  # a number a spreadsheet would add up
    assert record["items"] == "1 × =1+1 @ 1.00"  # starts with its quantity: read as text
