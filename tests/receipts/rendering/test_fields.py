"""getReceipt's answer fields are declared once (receipts.rendering.fields): the answer is built
from the declaration and the OpenAPI document describes it from the same list."""

import pytest

from agentapi.openapi.document import document
from receipts.rendering.fields import RECEIPT_FIELDS
from receipts.rendering.representation import receipt_data

pytestmark = pytest.mark.django_db

# Specification 2.1, in its order.
SPECIFIED = [
    "id", "token", "short_code", "merchant_id", "merchant_name", "merchant_logo", "accent_color", "total_amount",
    "currency", "transaction_date", "items", "category", "payment_method", "location", "status", "customer_email",
    "customer_phone", "created_at", "updated_at",
]  # fmt: skip


def test_the_answer_has_the_declared_fields_in_their_order_the_specifications_first(stored):
    names = [field.name for field in RECEIPT_FIELDS]
    assert list(receipt_data(stored)) == names
    assert names[:19] == SPECIFIED


def test_the_openapi_document_describes_the_declared_fields():
    schema = document()["components"]["schemas"]["Receipt"]
    assert list(schema["properties"].items()) == [(field.name, field.schema) for field in RECEIPT_FIELDS]
    assert schema["required"] == [field.name for field in RECEIPT_FIELDS]
    assert schema["additionalProperties"] is False


def test_each_kind_of_field_is_read_as_declared(receipt_factory):
    receipt = receipt_factory(
        customer_email="ada@example.com",
        tip_amount=500,
        payment_details={"card_brand": "Visa", "card_last4": "4242"},
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 100000, "tax_amount": 7500, "inclusive": True}],
    )
    masked, revealed = receipt_data(receipt), receipt_data(receipt, reveal_contact=True)
    assert (masked["customer_email"], revealed["customer_email"]) == ("a*******@example.com", "ada@example.com")
    assert masked["transaction_date"] == "2026-11-22T10:15:00.000Z"  # a moment: ISO 8601 UTC, milliseconds
    assert masked["tip_amount"] == 500  # a detail
    assert masked["discount_amount"] is None  # a detail not given
    assert masked["payment_details"] == {"card_brand": "Visa", "card_last4": "4242", "authorization_code": None}
    assert masked["tax_lines"][0]["name"] == "VAT"
    assert (masked["refunds"], masked["receipt_type"], masked["refund_of"]) == ([], "sale", None)


def test_a_receipt_without_details_has_fresh_empty_lists(stored):
    first, second = receipt_data(stored), receipt_data(stored)
    assert first["tax_lines"] == first["refunds"] == []
    first["refunds"].append("changed")
    assert second["refunds"] == []  # not one list shared by every answer
