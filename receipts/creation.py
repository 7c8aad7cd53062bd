"""Recording a sale as a receipt: merchant resolution, idempotency, short-code collisions."""

from collections.abc import Callable
from contextlib import nullcontext

from django.db import IntegrityError, transaction
from django.utils import timezone

from merchants.colors import HOUSE_ACCENT_COLOR
from merchants.models import Merchant
from receco.errors import Conflict, Forbidden, NotFound
from receco.queries import create
from receipts.codes import new_short_code, new_token
from receipts.deliveries import schedule_deliveries
from receipts.models import Receipt
from receipts.validation import sale_fingerprint

# Each attempt draws a fresh code from ~887 million; failing this many times in a row
# means something other than a collision is wrong.
_MAX_CODE_ATTEMPTS = 8

MERCHANT_NOT_FOUND = "Merchant not found"
MERCHANT_SUSPENDED = "Merchant account is suspended"
TOKEN_CONFLICT = "Token already used for a different receipt"


def merchant_for_sale(sale: dict, find: Callable[[str, str | None], Merchant] | None = None) -> Merchant:
    """Return the active merchant a validated sale names (``test-`` ones are created on
    first use), found by ``find(string_id, display_name)``: by default
    ``Merchant.objects.for_sale``, which a caller may have remembered.

    Raises NotFound for an unknown merchant and Forbidden for a suspended one.
    """
    find = find or Merchant.objects.for_sale
    try:
        merchant = find(sale["merchant_string_id"], sale["merchant_name"])
    except Merchant.DoesNotExist:
        raise NotFound(MERCHANT_NOT_FOUND) from None
    if merchant.is_suspended:
        raise Forbidden(MERCHANT_SUSPENDED)
    return merchant


def create_receipt(merchant: Merchant, sale: dict, *, livemode: bool = True) -> tuple[Receipt, bool]:
    """Store a validated sale for ``merchant``; return ``(receipt, created)``.

    The token is the idempotency key: the same token with the same content returns the
    original receipt with ``created`` False, even when both requests race (the unique
    constraint decides, not a read before the write). Raises Conflict when the token is
    already used for different content. A requested short code that another receipt
    holds is replaced by a fresh one.
    """
    fingerprint = sale_fingerprint(sale)
    token = sale["token"] or new_token()
    short_code = sale["short_code"] or new_short_code()
    fields = {
        "merchant": merchant,
        "merchant_name": sale["merchant_name"] or merchant.name,
        "merchant_logo": sale["merchant_logo"] or merchant.logo_url or None,
        "accent_color": sale["accent_color"] or merchant.accent_color or HOUSE_ACCENT_COLOR,
        "total_amount": sale["total_amount"],
        "currency": sale["currency"],
        "transaction_date": sale["transaction_date"] or timezone.now(),
        "items": sale["items"],
        "category": sale["category"],
        "payment_method": sale["payment_method"],
        "location": sale["location"],
        "status": sale["status"],
        "livemode": livemode and not merchant.is_test,
        "customer_email": sale["customer_email"],
        "customer_phone": sale["customer_phone"],
        "fingerprint": fingerprint,
    }
    # A lone INSERT outside a transaction is atomic by itself: no BEGIN/COMMIT round
    # trips. Deliveries to schedule go in one transaction with it; inside a transaction
    # already, a savepoint keeps a unique violation from breaking it.
    deliveries = fields["customer_email"] or fields["customer_phone"]
    in_transaction = transaction.get_connection().in_atomic_block
    insert = transaction.atomic if deliveries or in_transaction else nullcontext
    for _ in range(_MAX_CODE_ATTEMPTS):
        try:
            with insert():
                receipt = create(Receipt.objects, token=token, short_code=short_code, **fields)
                # A contact given with the sale asks for the receipt, like updateReceiptContact.
                schedule_deliveries(receipt, email=receipt.customer_email, phone=receipt.customer_phone)
                return receipt, True
        except IntegrityError:
            existing = Receipt.objects.filter(token=token).first()
            if existing is None:
                short_code = new_short_code()  # the short code was taken, not the token
                continue
            if existing.fingerprint != fingerprint or existing.merchant_id != merchant.pk:
                raise Conflict(TOKEN_CONFLICT) from None
            return existing, False
    raise RuntimeError(f"no free short code after {_MAX_CODE_ATTEMPTS} attempts")
