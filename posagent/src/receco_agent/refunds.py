"""The POS's refund: ``{receiptId, amount?, items?, reason?}`` checked against the service's
refundReceipt rules (service_rules.REFUND) and mapped to its input."""

import re
from dataclasses import dataclass

from receco_agent.service_rules import REFUND, REFUND_LINE, SHORT_CODE_PATTERN, TOKEN_PATTERN
from receco_agent.transactions import MAX_KEY_LENGTH, InvalidTransaction, check_texts

REFUND_PROCEDURE = "refundReceipt"
# A sale's token (or its short code), as the service reads it.
_RECEIPT_ID = re.compile(f"{TOKEN_PATTERN}|{SHORT_CODE_PATTERN}")


@dataclass(frozen=True)
class Refund:
    """A validated refund of the sale ``receipt_id``."""

    receipt_id: str
    amount: int | None
    items: list[dict] | None
    reason: str | None
    transaction_id: str | None = None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_refund(data: object) -> Refund:
    """Return the Refund of a decoded JSON value; raise InvalidTransaction naming what is wrong."""
    if not isinstance(data, dict):
        raise InvalidTransaction("Request body must be a JSON object")
    check_texts(data, "")
    receipt_id = data.get("receiptId")
    if not isinstance(receipt_id, str) or not _RECEIPT_ID.fullmatch(receipt_id):
        raise InvalidTransaction("receiptId must be the sale's receiptId (or its short code)")
    amount, items, reason = data.get("amount"), data.get("items"), data.get("reason")
    low, high = REFUND["amount"][1:]
    if amount is not None and (not _is_int(amount) or not low <= amount <= high):
        raise InvalidTransaction(f"amount must be an integer from {low} to {high} (minor currency units)")
    if items is not None:
        if not isinstance(items, list) or not items:
            raise InvalidTransaction("items must be a non-empty array of {index, quantity}")
        lines = []
        for number, line in enumerate(items):
            index = line.get("index") if isinstance(line, dict) else None
            quantity = line.get("quantity") if isinstance(line, dict) else None
            if not _is_int(index) or not REFUND_LINE["index"][1] <= index <= REFUND_LINE["index"][2]:
                raise InvalidTransaction(f"items[{number}].index must be the item's place in the sale, from 0")
            if not _is_int(quantity) or quantity < REFUND_LINE["quantity"][1]:
                raise InvalidTransaction(f"items[{number}].quantity must be an integer >= 1")
            lines.append({"index": index, "quantity": quantity})
        items = lines
    if amount is not None and items is not None:
        raise InvalidTransaction("Give an amount or items to refund, not both")
    if reason is not None and (not isinstance(reason, str) or len(reason) > REFUND["reason"][1]):
        raise InvalidTransaction(f"reason must be a string of at most {REFUND['reason'][1]} characters")
    transaction_id = data.get("transactionId")
    if transaction_id is not None and (
        not isinstance(transaction_id, str) or not 1 <= len(transaction_id) <= MAX_KEY_LENGTH
    ):
        raise InvalidTransaction(f"transactionId must be a string of 1 to {MAX_KEY_LENGTH} characters")
    return Refund(receipt_id, amount, items, reason or None, transaction_id or None)


def to_service_input(refund: Refund, refund_token: str) -> dict:
    """Return the refundReceipt input; absent options are left out."""
    payload: dict = {"token": refund.receipt_id, "refund_token": refund_token}
    if refund.amount is not None:
        payload["amount"] = refund.amount
    if refund.items is not None:
        payload["items"] = refund.items
    if refund.reason:
        payload["reason"] = refund.reason
    return payload
