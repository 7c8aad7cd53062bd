"""The three procedures POS integrations call. Each reads: parse input, check who may do
it, call the receipts app, return data; errors are raised and turned into envelopes by
the router, which has already authenticated the caller and counted the call."""

from functools import partial

from agentapi.registry import Call, mutation, query
from merchants.access import authorize_merchant, authorize_merchant_id, may_see_contact, receipt_for, sale_merchant
from receco.errors import InvalidInput
from receipts.contacts import clean_contact
from receipts.creation import create_receipt, merchant_for_sale
from receipts.deliveries import attach_contact
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
    receipt = receipt_for(call.caller, _token(_object_input(call)))
    return receipt_data(receipt, reveal_contact=may_see_contact(call.caller, receipt))


@mutation("createReceiptFromPOS")
def create_receipt_from_pos(call: Call) -> dict:
    sale = validate_sale(call.input)
    authorize_merchant_id(call.caller, sale["merchant_string_id"])
    merchant = merchant_for_sale(sale, find=partial(sale_merchant, call.caller))
    authorize_merchant(call.caller, merchant)
    created = create_receipt(merchant, sale, livemode=call.caller.livemode, keyed=call.caller.key is not None)
    receipt = created.receipt
    data = {"id": receipt.pk, "token": receipt.token, "short_code": receipt.short_code}
    data["receipt_url"] = receipt.public_url
    if created.deliveries:  # what became of the contact the sale carried: sent, or refused by a limit
        data["deliveries"] = [planned.as_data() for planned in created.deliveries]
    return data


@mutation("updateReceiptContact")
def update_receipt_contact(call: Call) -> dict:
    values = _object_input(call)
    token = _token(values)
    email, phone = clean_contact(values.get("email"), values.get("phone"))
    receipt = receipt_for(call.caller, token)
    # receipt_for let a key through only if it is the receipt's merchant's own.
    planned = attach_contact(receipt, email, phone, keyed=call.caller.key is not None)
    return {"success": True, "deliveries": [entry.as_data() for entry in planned]}
