"""Turning a sale into a receipt: idempotency, short-code collisions, and the rule that a
keyed sale always lands on its token. Which merchant it is for, and who may make it, is
merchants.sales."""

import logging
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from merchants.admission.admit import Admission
from merchants.colors import HOUSE_ACCENT_COLOR
from merchants.models import Merchant
from receco.errors import Conflict
from receco.lib import replicas
from receco.lib.queries import compiled_insert, create
from receco.ops import metrics
from receipts.claims import check_token, requested_short_code
from receipts.codes import new_short_code, new_token
from receipts.deliveries import schedule_deliveries
from receipts.delivery_limits import Planned
from receipts.models import Receipt, SetAside
from receipts.validation import sale_fingerprint
from webhooks.listeners import listeners, listening
from webhooks.models import EventType
from webhooks.outbox import create_with_event, emit, one_statement

logger = logging.getLogger(__name__)

# Each attempt draws a fresh code from ~887 million; failing this many times in a row
# means something other than a collision is wrong.
_MAX_CODE_ATTEMPTS = 8
# A receipt made without a key that holds the short code a keyed sale asks for is set
# aside only if it was made after the sale (less this much, for tills' clocks): one made
# before cannot be a claim on the sale's printed slip, only a chance collision.
SHORT_CODE_CLAIM_LEEWAY = timedelta(hours=1)

TOKEN_CONFLICT = "Token already used for a different receipt"
# What a sale may give beyond its total, kept in Receipt.details when given.
SALE_DETAILS = ("subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details")


@dataclass(frozen=True)
class Created:
    """What storing a sale came to: the receipt, whether this call created it (False for
    an idempotent replay), and what became of the deliveries its contact asked for."""

    receipt: Receipt
    created: bool
    deliveries: list[Planned] = field(default_factory=list)


def create_receipt(
    merchant: Merchant, sale: dict, *, livemode: bool = True, keyed: bool = False, admission: Admission | None = None
) -> Created:
    """Store a validated sale for ``merchant`` (saved here if it is a new test merchant),
    sent with the merchant's own API key or not (``keyed``), by the caller ``admission``
    admitted (its key and the failed-look-up budget of its address; None: not a caller of
    the API).

    The token is the idempotency key: the same token with the same content returns the
    original receipt with ``created`` False, even when both requests race (the unique
    constraint decides, not a read before the write). A requested short code that another
    receipt holds is replaced by a fresh one. A keyed sale always gets its token, and its
    short code when it was claimed after the sale: a receipt made without a key that holds
    them is set aside (``_set_aside``), within its own merchant only. Who may claim a token or
    short code at all is receipts.claims. Raises Conflict when the token is already used for
    different content by a keyed sale or another merchant's, or by anyone when this sale is
    not keyed, or was made offline with another merchant's key; InvalidInput when a signed
    token's MAC does not match. A failed call writes nothing.
    """
    check_token(sale["token"], merchant.pk, admission.key if admission is not None else None)
    fingerprint = sale_fingerprint(sale)
    token = sale["token"] or new_token()
    may_probe = admission is None or admission.may_probe_short_codes()
    requested = requested_short_code(sale["short_code"], token, may_probe=may_probe)
    short_code = requested or new_short_code()
    fields = _receipt_fields(merchant, sale, livemode=livemode, keyed=keyed)
    fields["fingerprint"] = fingerprint
    # A lone INSERT outside a transaction is atomic by itself: no BEGIN/COMMIT round
    # trips. A new merchant, deliveries to schedule and webhook events to record go in one
    # transaction with it; inside a transaction already, a savepoint keeps a unique
    # violation from breaking it.
    # On PostgreSQL a sale with webhook events and nothing else to do is one statement too,
    # the receipt, its event and its deliveries together (webhooks.outbox.create_with_event).
    contact = fields["customer_email"] or fields["customer_phone"]
    events = bool(listeners(merchant))  # known without a query (webhooks.listeners)
    in_transaction = transaction.get_connection().in_atomic_block
    insert = transaction.atomic if contact or events or in_transaction or merchant.pk is None else nullcontext
    endpoint_ids = []
    if events and not (contact or in_transaction or merchant.pk is None) and one_statement(compiled_insert(Receipt)):
        endpoint_ids = listening(merchant, EventType.RECEIPT_CREATED)
        insert = nullcontext
    for _ in range(_MAX_CODE_ATTEMPTS):
        try:
            if endpoint_ids:
                receipt = create_with_event(merchant, endpoint_ids, token=token, short_code=short_code, **fields)
                metrics.receipt_created(receipt.livemode)
                return Created(receipt, True, [])
            with insert():
                owner = merchant if merchant.pk is not None else _save_test_merchant(merchant)
                receipt = create(Receipt, token=token, short_code=short_code, merchant=owner, **fields)
                metrics.receipt_created(receipt.livemode)
                planned = []
                if contact:  # a contact given with the sale asks for the receipt, like updateReceiptContact
                    planned = schedule_deliveries(receipt, receipt.customer_email, receipt.customer_phone, keyed=keyed)
                if events:
                    emit(EventType.RECEIPT_CREATED, receipt, owner)
                return Created(receipt, True, planned)
        except IntegrityError:
            holder = Receipt.objects.filter(token=token).first()
        if holder is None:  # the short code was taken, not the token
            if keyed and _set_aside(_claim_on(short_code, sale, merchant), token, short_code):
                continue
            if short_code == requested and admission is not None:
                admission.record_failed_lookup()  # the answer tells the caller this code exists
            short_code = new_short_code()
            continue
        if holder.fingerprint == fingerprint and _same_merchant(holder, merchant):
            if keyed and not holder.keyed:  # the same sale, sent before without the key
                Receipt.objects.filter(pk=holder.pk).update(keyed=True)
                holder.keyed = True
            return Created(holder, False)
        if not (keyed and holder.merchant_id == merchant.pk and _set_aside(holder, token, short_code)):
            raise Conflict(TOKEN_CONFLICT)
    raise RuntimeError(f"no free short code after {_MAX_CODE_ATTEMPTS} attempts")


def _receipt_fields(merchant: Merchant, sale: dict, *, livemode: bool, keyed: bool) -> dict:
    # The merchant's name, logo and colour are its record's, unless it is a test-
    # merchant, which belongs to nobody and shows what its sales say.
    branded = sale if merchant.belongs_to_nobody else {}
    return {
        "merchant_name": branded.get("merchant_name") or merchant.name,
        "merchant_logo": branded.get("merchant_logo") or merchant.logo_url or None,
        "accent_color": branded.get("accent_color") or merchant.accent_color or HOUSE_ACCENT_COLOR,
        "total_amount": sale["total_amount"],
        "currency": sale["currency"],
        "transaction_date": sale["transaction_date"] or timezone.now(),
        "items": sale["items"],
        "category": sale["category"],
        "payment_method": sale["payment_method"],
        "location": sale["location"],
        "status": sale["status"],
        "livemode": livemode and not merchant.is_test,
        "keyed": keyed,
        "customer_email": sale["customer_email"],
        "customer_phone": sale["customer_phone"],
        "details": {name: sale[name] for name in SALE_DETAILS if sale.get(name) is not None} or None,
    }


def _same_merchant(receipt: Receipt, merchant: Merchant) -> bool:
    if merchant.pk is not None:
        return receipt.merchant_id == merchant.pk
    # A new test merchant: the same sale, racing, may have created it meanwhile.
    return Merchant.objects.filter(pk=receipt.merchant_id, string_id=merchant.string_id).exists()


def _save_test_merchant(merchant: Merchant) -> Merchant:
    # get_or_create: two first sales of the same new test- merchant may race.
    saved, _ = Merchant.objects.get_or_create(
        string_id=merchant.string_id,
        defaults={"name": merchant.name, "is_test": True, "require_api_key": False},
    )
    return saved


def _claim_on(short_code: str, sale: dict, merchant: Merchant) -> Receipt | None:
    """The receipt of ``merchant`` made without a key that holds ``short_code`` if it was made
    after the sale it would shadow (see SHORT_CODE_CLAIM_LEEWAY), else None. Another
    merchant's receipt is never set aside: what a link opens never changes across merchants."""
    if merchant.pk is None:
        return None
    sold_at = sale["transaction_date"] or timezone.now()
    return Receipt.objects.filter(
        short_code=short_code, merchant_id=merchant.pk, keyed=False, created_at__gte=sold_at - SHORT_CODE_CLAIM_LEEWAY
    ).first()


def _set_aside(holder: Receipt | None, token: str, short_code: str) -> bool:
    """Give ``holder``, a receipt made without its merchant's key, a fresh token and short
    code so that a keyed sale can take the ones it claimed, and record what it claimed
    (SetAside). Returns False (and changes nothing) if ``holder`` was made with a key:
    then it is a sale of its own."""
    if holder is None or holder.keyed:
        return False
    for _ in range(_MAX_CODE_ATTEMPTS):
        try:
            with transaction.atomic():  # a savepoint when a transaction is open
                taken = Receipt.objects.filter(pk=holder.pk, keyed=False).update(
                    token=new_token(), short_code=new_short_code(), updated_at=timezone.now()
                )
                if taken:
                    replicas.wrote(holder.token, holder.short_code)  # they now name the keyed sale
                    SetAside.objects.create(
                        receipt_id=holder.pk, claimed_token=holder.token, claimed_short_code=holder.short_code
                    )
            break
        except IntegrityError:  # the fresh short code was taken: draw again
            continue
    else:
        raise RuntimeError(f"no free short code after {_MAX_CODE_ATTEMPTS} attempts")
    if taken:
        logger.warning(
            "receipt %s of merchant %s, made without a key, set aside: a sale sent with its merchant's key "
            "claims its %s",
            holder.pk,
            holder.merchant_id,
            "token" if holder.token == token else "short code",
        )
    return bool(taken)
