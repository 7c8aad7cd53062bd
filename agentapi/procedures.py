"""The three procedures POS integrations call. Each reads: parse input, call the
receipts app, return data; errors are raised and turned into envelopes by the router."""

from agentapi.registry import Call, mutation, query
from receco.errors import InvalidInput
from receipts.contacts import attach_contact, clean_contact
from receipts.creation import create_receipt, merchant_for_sale
from receipts.lookup import find_receipt
from receipts.representation import receipt_data
from receipts.validation import validate_sale


def _object_input(call: Call) -> dict:
    if not isinstance(call.input, dict):
        raise InvalidInput("Input must be a JSON object")
    return call.input


def _token(values: dict):
    if "token" not in values or values["token"] is None:
        raise InvalidInput("token: This field is required")
    return values["token"]


@query("getReceipt")
def get_receipt(call: Call) -> dict:
    receipt = find_receipt(_token(_object_input(call)))
    return receipt_data(receipt)


@mutation("createReceiptFromPOS")
def create_receipt_from_pos(call: Call) -> dict:
    sale = validate_sale(call.input)
    merchant = merchant_for_sale(sale)
    receipt, _ = create_receipt(merchant, sale)
    return {
        "id": receipt.pk,
        "token": receipt.token,
        "short_code": receipt.short_code,
        "receipt_url": receipt.public_url,
    }


@mutation("updateReceiptContact")
def update_receipt_contact(call: Call) -> dict:
    values = _object_input(call)
    token = _token(values)
    email, phone = clean_contact(values.get("email"), values.get("phone"))
    receipt = find_receipt(token)
    attach_contact(receipt, email, phone)
    return {"success": True}
