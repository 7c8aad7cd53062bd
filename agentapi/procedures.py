"""The procedures POS integrations call. Each reads: parse the input, authorize the caller,
act on the receipts app, return data. The router has admitted the caller (its key and
limits) before; errors are raised and turned into envelopes by the router."""

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from ledger import bundles, proofs, trust
from merchants.admission.admit import Admission
from merchants.sales import authorize_changes, issuer, merchant_for_sale
from receco.errors import InvalidInput, NotFound, NotYet
from receco.lib.trpc import mutation, query
from receipts import writer
from receipts.contacts import clean_contact, clean_phone_channel
from receipts.creation import create_receipt
from receipts.lookup import find_receipt
from receipts.refunds import refund, validate_refund, validate_void, void
from receipts.rendering.representation import iso_utc, receipt_data
from receipts.validation import json_integer, validate_sale

FORMATS = (None, "orf")


@dataclass(frozen=True)
class Call:
    """One procedure call: the HTTP request it arrived in, its parsed input, and who made
    it, as the router admitted it."""

    request: HttpRequest
    path: str
    input: Any
    admission: Admission


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
    values = _object_input(call)
    token = _token(values)
    if values.get("format") not in FORMATS:
        raise InvalidInput('format: Must be "orf", or absent for the receipt as it is')
    receipt = find_receipt(token, call.admission, replica=True)
    merchant = issuer(receipt.merchant_id, call.admission.version)
    if values.get("format") == "orf":
        return trust.document(receipt)
    return receipt_data(receipt, reveal_contact=call.admission.speaks_for(receipt.merchant_id), merchant=merchant)


@mutation("createReceiptFromPOS")
def create_receipt_from_pos(call: Call) -> dict:
    sale = validate_sale(call.input)
    merchant = merchant_for_sale(call.admission, sale["merchant_string_id"], sale["merchant_name"])
    admission = call.admission
    created = create_receipt(
        merchant, sale, livemode=admission.livemode, keyed=admission.key is not None, admission=admission
    )
    receipt = created.receipt
    data = {"id": receipt.pk, "token": receipt.token, "short_code": receipt.short_code}
    data["receipt_url"] = receipt.public_url
    if created.outcomes.get("deliveries"):  # what became of the contact the sale carried: sent, or refused
        data["deliveries"] = [planned.as_data() for planned in created.outcomes["deliveries"]]
    return data


@mutation("updateReceiptContact")
def update_receipt_contact(call: Call) -> dict:
    values = _object_input(call)
    token = _token(values)
    email, phone = clean_contact(values.get("email"), values.get("phone"))
    phone_channel = clean_phone_channel(values.get("phone_channel"))
    receipt = find_receipt(token, call.admission)
    # find_receipt let a key through only if it is the receipt's merchant's own.
    keyed = call.admission.key is not None
    written = writer.update_contact(receipt, email, phone, keyed=keyed, phone_channel=phone_channel)
    return {"success": True, "deliveries": [entry.as_data() for entry in written.outcomes.get("deliveries", [])]}


@mutation("refundReceipt")
def refund_receipt(call: Call) -> dict:
    request = validate_refund(call.input)
    sale = find_receipt(request["token"], call.admission)
    authorize_changes(call.admission, sale.merchant)
    created = refund(sale, request, keyed=call.admission.key is not None, key=call.admission.key)
    receipt = created.receipt
    data = {"id": receipt.pk, "token": receipt.token, "short_code": receipt.short_code}
    data.update(receipt_url=receipt.public_url, amount=receipt.total_amount)
    if created.outcomes.get("deliveries"):
        data["deliveries"] = [planned.as_data() for planned in created.outcomes["deliveries"]]
    return data


@mutation("voidReceipt")
def void_receipt(call: Call) -> dict:
    request = validate_void(call.input)
    sale = find_receipt(request["token"], call.admission)
    authorize_changes(call.admission, sale.merchant)
    voided = void(sale, request["reason"], keyed=call.admission.key is not None)
    return {
        "id": sale.pk,
        "token": sale.token,
        "short_code": sale.short_code,
        "status": sale.status,
        "voided_at": iso_utc(voided.created_at),
    }


# --- The receipt log: proofs for POS integrators (docs/api.md, "Proofs") ---------------


def _optional_input(call: Call) -> dict:
    return {} if call.input is None else _object_input(call)


def _size(values: dict, name: str, required: bool = False) -> int | None:
    value = values.get(name)
    if value is None and not required:
        return None
    size = json_integer(value)
    if size is None or not 1 <= size <= proofs.MAX_SIZE:
        raise InvalidInput(f"{name}: Must be a JSON integer from 1 to {proofs.MAX_SIZE}")
    return size


@query("getReceiptProof")
def get_receipt_proof(call: Call) -> dict:
    values = _object_input(call)
    token = _token(values)
    entry = values.get("entry")
    entry = "receipt" if entry is None else entry
    if entry not in bundles.ENTRIES:
        raise InvalidInput('entry: Must be "receipt", "void" or "set_aside", or absent for the receipt')
    size = _size(values, "tree_size")
    receipt = find_receipt(token, call.admission)
    try:
        return proofs.receipt_proof(receipt, entry, size)
    except proofs.NoCheckpoint as missing:
        raise NotFound(missing.message) from None
    except bundles.NeverLogged as never:
        raise NotFound(str(never)) from None
    except bundles.NotLogged as error:
        what = entry.replace("_", " ")
        message = f"This {what} is not in the log's checkpoint of {error.args[0]} entries yet: try again"
        raise NotYet(message, proofs.wait_seconds()) from None


@query("getLogCheckpoint")
def get_log_checkpoint(call: Call) -> dict:
    size = _size(_optional_input(call), "tree_size")
    try:
        return proofs.checkpoint_data(proofs.checkpoint(size))
    except proofs.NoCheckpoint as missing:
        raise NotFound(missing.message) from None


@query("getLogConsistency")
def get_log_consistency(call: Call) -> dict:
    values = _object_input(call)
    old, new = _size(values, "from", required=True), _size(values, "to")
    try:
        return proofs.consistency(old, new)
    except proofs.NoCheckpoint as missing:
        raise NotFound(missing.message) from None
    except proofs.BadSizes as error:
        raise InvalidInput(str(error)) from None
