"""Refunds and voids: a sale's life after it was made.

A refund is a receipt of its own (``refund_of`` the sale), with its own token and short
code, for the whole amount that remains, an amount, or listed items of the sale. The
sale's status becomes ``partially_refunded`` or ``refunded``, and its ``details`` list its
refunds, so that reading it stays one query. A void cancels a sale that has no refunds
(status ``voided``, a Void record). Both take the sale's row lock, so that concurrent
refunds cannot refund more than remains; the refund token, like a sale's token, is the
idempotency key.
"""

import hashlib
import json
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import serializers

from merchants.models import ApiKey
from receco.errors import Conflict, InvalidInput
from receipts import writer
from receipts.claims import check_token
from receipts.codes import TOKEN_FORM_MESSAGE, TOKEN_MAX_LENGTH, TOKEN_RE, new_token
from receipts.creation import TOKEN_CONFLICT, Created
from receipts.models import Receipt, Void
from receipts.numbering import series_name
from receipts.rendering.representation import iso_utc
from receipts.validation import MAX_AMOUNT, MAX_ITEMS, StrictCharField, StrictIntegerField, errors_message

PARTIALLY_REFUNDED = "partially_refunded"
REFUNDED = "refunded"
VOIDED = "voided"

REFUND_EXCEEDS = "Refund exceeds the amount remaining"
REFUND_OF_VOIDED = "A voided receipt cannot be refunded"
REFUND_OF_REFUND = "A refund cannot be refunded"
VOID_WITH_REFUNDS = "Only a receipt with no refunds can be voided"
VOID_OF_REFUND = "A refund cannot be voided"
# A sale lists its refunds in its own row (getReceipt answers it in one query): without a
# bound, thousands of one-unit refunds of a receipt anyone may refund (a test- merchant's)
# made its answer hundreds of kilobytes.
MAX_REFUNDS = 100
TOO_MANY_REFUNDS = f"A receipt can be refunded at most {MAX_REFUNDS} times"


class RefundLineSerializer(serializers.Serializer):
    index = StrictIntegerField(min_value=0, max_value=MAX_ITEMS - 1)  # the item's place in the sale, from 0
    quantity = StrictIntegerField(min_value=1)


class RefundSerializer(serializers.Serializer):
    token = StrictCharField(max_length=TOKEN_MAX_LENGTH)
    refund_token = StrictCharField(max_length=TOKEN_MAX_LENGTH, required=False, allow_null=True, default=None)
    amount = StrictIntegerField(min_value=1, max_value=MAX_AMOUNT, required=False, allow_null=True, default=None)
    # Made apart from its lines, which would otherwise allow null too (as SaleSerializer.tax_lines).
    items = serializers.ListSerializer(
        child=RefundLineSerializer(), required=False, allow_null=True, default=None, allow_empty=False
    )
    reason = StrictCharField(max_length=200, required=False, allow_null=True, allow_blank=True, default=None)

    def validate_refund_token(self, value):
        if value and not TOKEN_RE.match(value):
            raise serializers.ValidationError(TOKEN_FORM_MESSAGE)
        return value or None

    def validate(self, attrs):
        if attrs["amount"] is not None and attrs["items"] is not None:
            raise serializers.ValidationError("Give an amount or items to refund, not both")
        return attrs


class VoidSerializer(serializers.Serializer):
    token = StrictCharField(max_length=TOKEN_MAX_LENGTH)
    reason = StrictCharField(max_length=200, required=False, allow_null=True, allow_blank=True, default=None)


def validate_void(data: object) -> dict:
    """The voidReceipt input, validated; raises InvalidInput naming every bad field."""
    return _validated(VoidSerializer, data)


def validate_refund(data: object) -> dict:
    """The refundReceipt input, validated; raises InvalidInput naming every bad field."""
    request = _validated(RefundSerializer, data)
    request["items"] = [dict(line) for line in request["items"]] if request["items"] else None
    return request


def _validated(serializer_class, data: object) -> dict:
    if not isinstance(data, dict):
        raise InvalidInput("Input must be a JSON object")
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        raise InvalidInput(errors_message(serializer.errors))
    values = dict(serializer.validated_data)
    values["reason"] = values["reason"] or None
    return values


@dataclass(frozen=True)
class RefundPlan:
    amount: int
    items: list[dict]  # the refund receipt's items
    lines: list[dict] = field(default_factory=list)  # {index, quantity} of the sale's items refunded
    # What the items refunded cost on the sale, before its discounts and charges (None for
    # a refund of an amount): ``amount`` less this is their share of those.
    items_value: int | None = None
    whole_rest: bool = False  # it takes the last of the items, and with them all that is left


@dataclass(frozen=True)
class SaleAdjustments:
    """What lies between a sale's items and what the customer paid for them: the parts a
    refund of items gives back its share of (``_paid_share``), and the tip, which it does not
    (unless the refund takes the last of the items, and with them the whole rest)."""

    discount: int  # the sale's discount
    added_taxes: list[dict]  # its tax lines added on top of the items' prices
    other: int  # what else the total holds beyond the items (a service charge; below 0 an unnamed discount)
    tip: int

    def __bool__(self) -> bool:
        return bool(self.discount or self.added_taxes or self.other)


def refund(sale: Receipt, request: dict, *, keyed: bool, key: ApiKey | None = None) -> Created:
    """Refund ``sale`` as ``request`` (validate_refund) says; return the refund receipt
    (and the hooks' outcomes: the refund sent to the sale's customer). ``key``: the
    caller's API key, if it sent one.

    The same refund token with the same request returns the refund made the first time
    (``created`` False). Raises Conflict when the sale is itself a refund or voided, when
    the refund exceeds what remains, when the refund token is another receipt's, or when it
    was made offline with another merchant's key (receipts.claims).
    """
    check_token(request["refund_token"], sale.merchant_id, key)
    fingerprint = _fingerprint(sale.token, request)
    token = request["refund_token"] or new_token()
    with transaction.atomic():
        locked = Receipt.objects.select_for_update().get(pk=sale.pk)
        existing = Receipt.objects.filter(token=token).first() if request["refund_token"] else None
        if existing is not None:
            if existing.refund_of_id != locked.pk or existing.fingerprint != fingerprint:
                raise Conflict(TOKEN_CONFLICT)
            return Created(existing, False)
        plan = plan_refund(locked, request)
        try:
            refund_receipt = writer.insert_receipt(
                _refund_values(locked, token, plan, request["reason"], fingerprint, keyed=keyed)
            )
        except IntegrityError:  # the token was taken meanwhile, by a receipt of another sale
            raise Conflict(TOKEN_CONFLICT) from None
        _list_on_sale(locked, refund_receipt, plan)
        written = writer.record_refund(locked, refund_receipt, keyed=keyed)
    sale.status, sale.details = locked.status, locked.details
    return Created(refund_receipt, True, written.outcomes)


def plan_refund(sale: Receipt, request: dict) -> RefundPlan:
    """What refunding ``sale`` as ``request`` (validate_refund) would give back, as it
    stands now; writes nothing (the dashboard's confirmation shows it; ``refund`` makes it
    under the sale's lock). Raises Conflict or InvalidInput as ``refund`` would."""
    if sale.refund_of_id:
        raise Conflict(REFUND_OF_REFUND)
    if sale.status == VOIDED:
        raise Conflict(REFUND_OF_VOIDED)
    if len(sale.detail("refunds", [])) >= MAX_REFUNDS:
        raise Conflict(TOO_MANY_REFUNDS)
    return _plan(sale, request)


def remaining(sale: Receipt) -> int:
    """What of ``sale``'s total has not been refunded yet."""
    return sale.total_amount - sum(entry["amount"] for entry in sale.detail("refunds", []))


def quantities_left(sale: Receipt) -> list[int]:
    """How many of each of ``sale``'s items (by place) have not been refunded yet."""
    refunded = sale.detail("refunded_lines", {})
    return [item["quantity"] - refunded.get(str(index), 0) for index, item in enumerate(sale.items)]


def sale_adjustments(sale: Receipt) -> SaleAdjustments:
    """The discounts, taxes and charges that make a refund of ``sale``'s items give back
    other than the items' prices; false when there are none."""
    items_sum = sum(item["total_price"] for item in sale.items)
    discount = sale.detail("discount_amount") or 0
    tip = sale.detail("tip_amount") or 0
    added = [line for line in sale.detail("tax_lines") or [] if not line["inclusive"]]
    other = sale.total_amount - tip - items_sum + discount - sum(line["tax_amount"] for line in added)
    return SaleAdjustments(discount, added, other, tip)


def _plan(sale: Receipt, request: dict) -> RefundPlan:
    left = remaining(sale)
    if request["items"] is None:
        amount = request["amount"] if request["amount"] is not None else left
        if not 0 < amount <= left:
            raise Conflict(REFUND_EXCEEDS)
        return RefundPlan(amount, [_line(f"Refund of receipt {sale.short_code}", 1, amount)])
    refunded = {int(index): quantity for index, quantity in sale.detail("refunded_lines", {}).items()}
    before = _items_value(sale.items, refunded)
    items = []
    for line in request["items"]:
        index, quantity = line["index"], line["quantity"]
        if index >= len(sale.items):
            raise InvalidInput(f"items: The sale has {len(sale.items)} items; there is no item {index}")
        item = sale.items[index]
        if quantity > item["quantity"] - refunded.get(index, 0):
            raise Conflict(REFUND_EXCEEDS)
        refunded[index] = refunded.get(index, 0) + quantity
        items.append(_line(item["name"], quantity, item["unit_price"], item.get("sku")))
    # Every item back: the whole sale is refunded, whatever rounding said before. Otherwise what
    # all the items refunded so far are worth, less what those before this refund were worth:
    # each refund's share rounds, yet the shares always add up to what was paid.
    whole_rest = all(refunded.get(index, 0) == item["quantity"] for index, item in enumerate(sale.items))
    after = _items_value(sale.items, refunded)
    amount = left if whole_rest else _paid_share(sale, after) - _paid_share(sale, before)
    if not 0 < amount <= left:
        raise Conflict(REFUND_EXCEEDS)
    lines = [{"index": line["index"], "quantity": line["quantity"]} for line in request["items"]]
    return RefundPlan(amount, items, lines, after - before, whole_rest)


def _items_value(items: list[dict], refunded: dict[int, int]) -> int:
    """What ``refunded`` quantities of ``items`` (by index) are worth at the items' own totals."""
    return sum(
        (item["total_price"] * refunded[index] * 2 + item["quantity"]) // (2 * item["quantity"])
        for index, item in enumerate(items)
        if refunded.get(index)
    )


def _paid_share(sale: Receipt, items_value: int) -> int:
    """The share of what the customer paid for items (discounts and added taxes pro rata, the
    tip not at all) that ``items_value`` of the sale's items is worth, rounded half up."""
    items_sum = sum(item["total_price"] for item in sale.items)
    if not items_sum:
        return items_value
    paid_for_items = sale.total_amount - (sale.detail("tip_amount") or 0)
    return (items_value * paid_for_items * 2 + items_sum) // (2 * items_sum)


def _line(name: str, quantity: int, unit_price: int, sku: str | None = None) -> dict:
    line = {"name": name, "quantity": quantity, "unit_price": unit_price, "total_price": quantity * unit_price}
    if sku:
        line["sku"] = sku
    return line


def _refund_values(sale: Receipt, token: str, plan: RefundPlan, reason, fingerprint: str, *, keyed: bool) -> dict:
    """Every column of the refund receipt but its short code and number: it is numbered
    in its merchant's series (it names no till)."""
    details = {"refund_of": sale.token, "refund_of_short_code": sale.short_code, "lines": plan.lines}
    if reason:
        details["reason"] = reason
    return {
        "token": token,
        "merchant_id": sale.merchant_id,
        "merchant_name": sale.merchant_name,
        "merchant_logo": sale.merchant_logo,
        "accent_color": sale.accent_color,
        "total_amount": plan.amount,
        "currency": sale.currency,
        "transaction_date": timezone.now(),
        "items": plan.items,
        "category": sale.category,
        "payment_method": sale.payment_method,
        "location": sale.location,
        "status": "completed",
        "livemode": sale.livemode,
        "keyed": keyed,
        "customer_email": sale.customer_email,
        "customer_phone": sale.customer_phone,
        "customer_phone_channel": sale.customer_phone_channel,
        "details": details,
        "refund_of": sale,
        "fingerprint": fingerprint,
        "number_series": series_name(sale.merchant, livemode=sale.livemode),
    }


def _list_on_sale(sale: Receipt, refund_receipt: Receipt, plan: RefundPlan) -> None:
    """Set the sale's details and status (not saved) to list ``refund_receipt``."""
    details = dict(sale.details or {})
    details["refunds"] = [
        *details.get("refunds", []),
        {
            "token": refund_receipt.token,
            "short_code": refund_receipt.short_code,
            "amount": plan.amount,
            "created_at": iso_utc(refund_receipt.created_at),
        },
    ]
    if plan.lines:
        refunded = dict(details.get("refunded_lines", {}))
        for line in plan.lines:
            refunded[str(line["index"])] = refunded.get(str(line["index"]), 0) + line["quantity"]
        details["refunded_lines"] = refunded
    sale.details = details
    sale.status = REFUNDED if remaining(sale) == 0 else PARTIALLY_REFUNDED


def _fingerprint(sale_token: str, request: dict) -> str:
    content = {"refund_of": sale_token, **{k: v for k, v in request.items() if k not in ("token", "refund_token")}}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def void(sale: Receipt, reason: str | None, *, keyed: bool) -> Void:
    """Cancel a sale with no refunds; return its Void. Voiding it again returns the same
    Void. Raises Conflict for a refund, or a sale that has refunds."""
    with transaction.atomic():
        locked = Receipt.objects.select_for_update().get(pk=sale.pk)
        existing = Void.objects.filter(receipt=locked).first()  # never a refund's: refunds are not voided
        if existing is not None:
            return existing
        check_voidable(locked)
        voided = writer.void(locked, VOIDED, reason or "", keyed=keyed)
    sale.status = VOIDED
    return voided


def check_voidable(sale: Receipt) -> None:
    """Raise Conflict if ``sale`` cannot be voided: it is a refund, or it has refunds."""
    if sale.refund_of_id:
        raise Conflict(VOID_OF_REFUND)
    if sale.detail("refunds"):
        raise Conflict(VOID_WITH_REFUNDS)
