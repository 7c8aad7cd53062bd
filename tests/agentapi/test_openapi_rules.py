"""The rules the OpenAPI document states beyond types and bounds (agentapi.openapi.rules)
are the service's: each input below is valid by the document exactly when the service
takes it (any answer but 400). Issue 32.14's review found them unstated: a refund of an
amount and items together and a contact with neither email nor phone fitted the
document and were refused; 1556.0, which JSON Schema's integer admits, was refused."""

import pytest
from jsonschema import Draft202012Validator

from agentapi.openapi.document import document, input_of

pytestmark = pytest.mark.django_db

LINE = {"index": 0, "quantity": 1}


def _valid(name: str, value) -> bool:
    ((method, operation),) = document()["paths"][f"/api/trpc/{name}"].items()
    schema, _ = input_of(operation)
    if method == "get":
        (parameter,) = operation["parameters"]
        if value is None:
            return not parameter["required"]
    return Draft202012Validator(schema).is_valid(value)


def _taken(api, name: str, value) -> bool:
    if name.startswith("get"):
        status, _ = api.get(name, value)
    else:
        status, _ = api.post(name, value)
    return status != 400


CASES = [
    ("refundReceipt", {"token": "K7P2QX", "amount": 100, "items": [LINE]}, False),
    ("refundReceipt", {"token": "K7P2QX", "amount": None, "items": [LINE]}, True),
    ("refundReceipt", {"token": "K7P2QX", "amount": 100, "items": None}, True),
    ("refundReceipt", {"token": "K7P2QX", "amount": 100.0}, True),
    ("refundReceipt", {"token": "K7P2QX", "amount": 100.5}, False),
    ("refundReceipt", {"token": "K7P2QX", "refund_token": ""}, False),
    ("refundReceipt", {"token": "K7P2QX", "refund_token": " rcpt_refund0001 "}, True),
    ("refundReceipt", {"token": "\u2003K7P2QX\u2003"}, True),
    ("refundReceipt", {"token": "K7P2Q!"}, False),
    ("updateReceiptContact", {"token": "K7P2QX"}, False),
    ("updateReceiptContact", {"token": "K7P2QX", "email": None, "phone": "  "}, False),
    ("updateReceiptContact", {"token": "K7P2QX", "email": "", "phone": None}, False),
    ("updateReceiptContact", {"token": "K7P2QX", "email": "customer@example.com"}, True),
    ("updateReceiptContact", {"token": "K7P2QX", "email": None, "phone": "+2348031234589"}, True),
    ("voidReceipt", {"token": "bad token!"}, False),
    ("voidReceipt", {"token": " rcpt_mfx3k2a1_q8z0lp\u00a0"}, True),
    ("getLogCheckpoint", None, True),
    ("getLogCheckpoint", {}, True),
    ("getLogCheckpoint", {"tree_size": 1.0}, True),
    ("getLogCheckpoint", {"tree_size": 1.5}, False),
    ("getReceiptProof", {"token": "K7P2QX", "entry": ""}, False),
    ("getReceiptProof", {"token": "K7P2QX", "entry": None}, True),
]


@pytest.mark.parametrize(("name", "value", "valid"), CASES, ids=[f"{name}:{value}" for name, value, _ in CASES])
def test_the_document_and_the_service_agree(api, receipt, name, value, valid):
    assert (_valid(name, value), _taken(api, name, value)) == (valid, valid)


SALE_CASES = [
    ({"total_amount": 130000.0}, True),
    ({"total_amount": 1556.5}, False),
    ({"total_amount": "130000"}, False),
    ({"token": "  rcpt_padded00001  "}, True),
    ({"token": "rcpt bad"}, False),
    ({"short_code": " k7p2qx "}, True),
    ({"short_code": "K7P2QX1"}, False),
    ({"currency": " ngn "}, True),
    ({"currency": "NAIRA"}, False),
    ({"accent_color": "#ABC"}, True),
    ({"accent_color": "teal"}, False),
    ({"merchant_string_id": "-mama-put"}, False),
    ({"terminal_id": "Till 3"}, True),
    ({"terminal_id": "---"}, False),
    ({"merchant_name": "x" * 200 + "  "}, True),
    ({"merchant_name": "x" * 201}, False),
    ({"merchant_name": "Mama\x00Put"}, False),
    ({"payment_details": {"card_last4": "4242"}}, True),
    ({"payment_details": {"card_last4": "42a2"}}, False),
]


@pytest.mark.parametrize(("changes", "valid"), SALE_CASES, ids=[str(changes) for changes, _ in SALE_CASES])
def test_the_document_and_the_service_agree_on_sales(api, sale, changes, valid):
    value = {**sale, **changes}
    assert (_valid("createReceiptFromPOS", value), _taken(api, "createReceiptFromPOS", value)) == (valid, valid)
