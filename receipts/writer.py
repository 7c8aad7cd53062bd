"""The one writer of receipt rows: every INSERT, UPDATE and DELETE of a Receipt (a sale, a
refund, its sale's refunds and status, a void, a receipt set aside, a contact given or
erased, a receipt past its retention) happens here, and with it whatever other apps add to
the change through the hooks (receipts.hooks; erasure and retention tell no hook).

The rules that decide what to write (idempotency, short-code collisions, who may refund)
are the callers': receipts.creation, receipts.refunds, the contact's validation
(receipts.contacts). Each function here writes one change and says what it raises; none
reads to decide.

Every receipt row takes the next number of its series (receipts.numbering) as it is
inserted: the writer's own part of the INSERT, an upsert of the series' row (SQL of its
own: the ORM cannot say it) run just before the receipt's ``save()``, in the same
transaction, so a receipt that is not stored gives its number back; a receipt and what the
hooks add to it commit together. That is so on SQLite; on PostgreSQL every receipt is ONE
statement (``_one_statement``: the upsert in a CTE, and the INSERT), built on documented
API only, and a sale no hook wants is that statement alone, outside any transaction. It is
kept because the transaction, the ORM's INSERT and the two statements cost a sale 1.45
times the instructions (bench/results/ of 2026-12-05).
Every change of an existing receipt has its token and short code read from the primary
for a while after (receco.lib.replicas.wrote: read-your-writes).
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, connections, router, transaction
from django.db.models import Q, QuerySet, signals
from django.utils import timezone

from merchants.models import Merchant
from merchants.sales import saved_test_merchant
from receco.lib import replicas
from receipts import hooks
from receipts.codes import new_short_code, new_token
from receipts.contacts import EMAIL_FIELD, PHONE_CHANNEL_FIELD, PHONE_FIELD
from receipts.hooks import Change, Written
from receipts.models import Receipt, ReceiptSeries, RemovedReceipt, SetAside, Void

logger = logging.getLogger(__name__)

# Each attempt draws a fresh code from ~887 million; failing this many times in a row
# means something other than a collision is wrong.
MAX_CODE_ATTEMPTS = 8


def insert_sale(
    merchant: Merchant, values: dict, *, keyed: bool, setting_aside: list[tuple[Receipt, str]] = ()
) -> Written:
    """Store a new sale of ``merchant`` (saved first if it is a new test merchant) with
    ``values`` (every column but the merchant and the number: the next of its
    ``number_series``, drawn here), and what the hooks add to it. Returns the receipt and
    the hooks' outcomes.

    ``setting_aside``: receipts that hold the token or short code the sale claims, each
    with what it claimed (``set_aside``), set aside in the same transaction as the sale is
    stored: nothing can take them in between, and if the sale fails they stay as they were.

    Raises IntegrityError, having written nothing (its number given back), when its token
    or short code is taken; inside a transaction, a savepoint keeps that from breaking it.
    """
    using = router.db_for_write(Receipt)
    sale = None
    if merchant.pk is not None:
        sale = _Sale(merchant, values, keyed)
        if not setting_aside and _alone(using) and sale.receipt.number_series is not None and not sale.wanted:
            _one_statement(sale.receipt, using)  # its number and its INSERT alone
            hooks.committed(sale.change, using)
            return Written(sale.receipt)
    with transaction.atomic(using=using):  # a savepoint when a transaction is open
        for holder, claimed in setting_aside:
            set_aside(holder, claimed)
        if sale is None:
            sale = _Sale(saved_test_merchant(merchant), values, keyed)
        _store(sale.receipt, using)
        written = Written(sale.receipt, hooks.write(sale.wanted, sale.change))
    hooks.committed(sale.change, using)
    return written


class _Sale:
    """A sale about to be stored: its receipt, its change and the hooks that want it (they
    ask before the INSERT: a sale asks every hook, without a query if it can)."""

    def __init__(self, owner: Merchant, values: dict, keyed: bool):
        self.receipt = Receipt(merchant=owner, **values)
        self.change = Change(
            hooks.CREATED, self.receipt, owner, keyed,
            email=self.receipt.customer_email, phone=self.receipt.customer_phone,
        )  # fmt: skip
        self.wanted = hooks.wanting(self.change)


def _store(receipt: Receipt, using: str) -> Receipt:
    """Store ``receipt`` (every column but its number), numbered in its series; return it.
    Call it in a transaction (``transaction.atomic``): the number's upsert and the
    receipt's INSERT are undone together. Raises IntegrityError as the INSERT does."""
    if receipt.number_series is not None and connections[using].vendor == "postgresql":
        _one_statement(receipt, using)  # in the transaction: one round trip fewer
        return receipt
    if receipt.number_series is not None:
        receipt.number = _next_number(receipt.merchant_id, receipt.number_series, using)
    receipt.save(force_insert=True, using=using)
    return receipt


# The upsert that takes the next number of a series (receipts.numbering), by vendor. It
# locks that series' row, and only that one, until the transaction ends.
_UPSERTS: dict[str, str] = {}


def _next_number(merchant_id: int, series: str, using: str) -> int:
    """The next number of the series (merchant, name), drawn in the open transaction."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(_upsert(connection), [merchant_id, series])
        (number,) = cursor.fetchone()
    return number


def _upsert(connection) -> str:
    sql = _UPSERTS.get(connection.vendor)
    if sql is None:
        qn, meta = connection.ops.quote_name, ReceiptSeries._meta
        table = qn(meta.db_table)
        merchant, name, last = (qn(meta.get_field(field).column) for field in ("merchant", "name", "last"))
        sql = _UPSERTS[connection.vendor] = (
            f"INSERT INTO {table} ({merchant}, {name}, {last}) VALUES (%s, %s, 1)"  # noqa: S608 (names from the model)
            f" ON CONFLICT ({merchant}, {name}) DO UPDATE SET {last} = {table}.{last} + 1 RETURNING {last}"
        )
    return sql


def _alone(using: str) -> bool:
    """Whether a sale may be stored in one statement: on PostgreSQL, outside a transaction."""
    connection = connections[using]
    return connection.vendor == "postgresql" and not connection.in_atomic_block


# The sale's one statement (``_one_statement``), by vendor: the same for every sale.
_ONE: dict[str, str] = {}


def _one_statement(receipt: Receipt, using: str) -> None:
    """Store ``receipt`` and draw its number in ONE statement, atomic by itself (PostgreSQL:
    the series' upsert in a data-modifying CTE), as ``save()`` would: the fields' own
    ``pre_save`` and ``get_db_prep_save``, the same signals."""
    connection = connections[using]
    meta, qn = Receipt._meta, connection.ops.quote_name
    signals.pre_save.send(sender=Receipt, instance=receipt, raw=False, using=using, update_fields=None)
    fields = [f for f in meta.concrete_fields if not f.primary_key and not f.generated and f.name != "number"]
    params = [receipt.merchant_id, receipt.number_series]
    params += [field.get_db_prep_save(field.pre_save(receipt, True), connection) for field in fields]
    sql = _ONE.get(connection.vendor)
    if sql is None:
        columns = [qn(f.column) for f in fields]
        number, last = qn(meta.get_field("number").column), qn(ReceiptSeries._meta.get_field("last").column)
        sql = _ONE[connection.vendor] = (
            f"WITH receipt_number AS ({_upsert(connection)})"  # noqa: S608 (names from the model)
            f" INSERT INTO {qn(meta.db_table)} ({', '.join(columns)}, {number})"
            f" VALUES ({', '.join('%s' for _ in columns)}, (SELECT {last} FROM receipt_number))"
            f" RETURNING {qn(meta.pk.column)}, {number}"
        )
    with transaction.mark_for_rollback_on_error(using), connection.cursor() as cursor:
        cursor.execute(sql, params)
        receipt.pk, receipt.number = cursor.fetchone()
    # Saved, as save() marks it: Model._state is documented (Model instance reference).
    receipt._state.adding, receipt._state.db = False, using
    signals.post_save.send(sender=Receipt, instance=receipt, created=True, update_fields=None, raw=False, using=using)


def insert_receipt(values: dict) -> Receipt:
    """Store a receipt with ``values`` (a refund's: every column but its short code and
    number), a fresh short code drawn again if it is taken, numbered in its series, in a
    savepoint of the caller's transaction; return it.

    Raises IntegrityError, having written nothing, when its token is taken.
    """
    token = values["token"]
    using = router.db_for_write(Receipt)
    for _ in range(MAX_CODE_ATTEMPTS):
        try:
            with transaction.atomic(using=using):
                return _store(Receipt(**{"short_code": new_short_code(), **values}), using)
        except IntegrityError:
            if Receipt.objects.filter(token=token).exists():
                raise
    raise RuntimeError(f"no free short code after {MAX_CODE_ATTEMPTS} attempts")


def record_refund(sale: Receipt, refund: Receipt, *, keyed: bool) -> Written:
    """Save ``sale``'s status and details as the caller set them to list ``refund`` (a
    receipt ``insert_receipt`` stored), with what the hooks add. Call it in the
    transaction that holds the sale's row lock. Returns the refund and the outcomes."""
    sale.save(update_fields=["details", "status", "updated_at"])
    replicas.wrote(sale.token, sale.short_code)
    change = Change(
        hooks.REFUNDED, refund, keyed=keyed, sale=sale, email=sale.customer_email, phone=sale.customer_phone
    )
    written = Written(refund, hooks.write(hooks.wanting(change), change))
    hooks.committed(change)
    return written


def void(sale: Receipt, status: str, reason: str, *, keyed: bool) -> Void:
    """Give ``sale`` ``status`` and record its Void, with what the hooks add. Call it in
    the transaction that holds the sale's row lock. Returns the Void."""
    sale.status = status
    sale.save(update_fields=["status", "updated_at"])
    replicas.wrote(sale.token, sale.short_code)
    voided = Void.objects.create(receipt=sale, reason=reason, keyed=keyed)
    change = Change(hooks.VOIDED, sale, keyed=keyed)
    hooks.write(hooks.wanting(change), change)
    hooks.committed(change)
    return voided


def update_contact(
    receipt: Receipt, email: str | None, phone: str | None, *, keyed: bool = False, phone_channel: str | None = None
) -> Written:
    """Store the contact given (a field given as None is left as it was) and what the
    hooks add (the receipt sent there), all or nothing: a hook that refuses raises, and
    nothing is stored. A number given is stored with ``phone_channel``, how the customer
    asked for it there (None: sms). Returns the receipt and the outcomes."""
    with transaction.atomic():
        given = (("customer_email", email), ("customer_phone", phone))
        changes = {field: value for field, value in given if value is not None}
        if phone is not None:
            changes[PHONE_CHANNEL_FIELD] = phone_channel
        for field, value in changes.items():
            setattr(receipt, field, value)
        receipt.save(update_fields=[*changes, "updated_at"])
        replicas.wrote(receipt.token, receipt.short_code)
        change = Change(hooks.CONTACT_UPDATED, receipt, keyed=keyed, email=email, phone=phone)
        written = Written(receipt, hooks.write(hooks.wanting(change), change))
        hooks.committed(change)
        return written


def holding(field: str, contact: str) -> QuerySet:
    """The receipts whose ``field`` (customer_email or customer_phone) is ``contact``: an
    email address whatever the case of its letters, a phone number (E.164) exactly."""
    if field == EMAIL_FIELD:
        return Receipt.objects.filter(customer_email__iexact=contact)
    if field == PHONE_FIELD:
        return Receipt.objects.filter(customer_phone=contact)
    raise ValueError(f"not a contact field: {field!r}")


def erase_contact(field: str, contact: str) -> int:
    """Remove ``contact`` from ``field`` of every receipt that holds it (``holding``), from
    every merchant; return how many receipts changed. Nothing signed changes
    (receipts.signing never signs a contact), no hook hears of it: the merchant learns
    nothing. Their pages read the primary for a while after (read-your-writes)."""
    receipts = holding(field, contact)
    with transaction.atomic():
        names = [name for pair in receipts.values_list("token", "short_code") for name in pair]
        count = receipts.update(**_cleared(field), updated_at=timezone.now())
        replicas.wrote(*names)
    return count


def detach_contact(receipt: Receipt, field: str, contact: str) -> bool:
    """Remove ``contact`` from ``field`` of ``receipt`` if it still holds it there; return
    whether it did (False: it was removed or replaced meanwhile)."""
    changed = holding(field, contact).filter(pk=receipt.pk).update(**_cleared(field), updated_at=timezone.now())
    if changed:
        for name in _cleared(field):
            setattr(receipt, name, None)
        replicas.wrote(receipt.token, receipt.short_code)
    return bool(changed)


def forget_contacts(receipts: QuerySet) -> int:
    """Remove both contact fields from each of ``receipts`` that has one (retention);
    return how many changed."""
    with_contact = receipts.filter(Q(customer_email__isnull=False) | Q(customer_phone__isnull=False))
    return with_contact.update(
        customer_email=None, customer_phone=None, customer_phone_channel=None, updated_at=timezone.now()
    )


def _cleared(field: str) -> dict:
    """The columns that go when ``field``'s contact goes: a number takes its channel with it."""
    return {field: None, PHONE_CHANNEL_FIELD: None} if field == PHONE_FIELD else {field: None}


def remove(sale_ids: list[int]) -> int:
    """Delete the sales ``sale_ids`` with their refunds, voids and deliveries, leaving a
    RemovedReceipt of each receipt deleted (retention: the log keeps their leaves), in one
    transaction; return how many receipts were deleted. The caller decides which may go."""
    with transaction.atomic():
        refunds = Receipt.objects.filter(refund_of_id__in=sale_ids)
        gone = list(refunds.values_list("pk", "created_at")) + list(
            Receipt.objects.filter(pk__in=sale_ids).values_list("pk", "created_at")
        )
        now = timezone.now()
        RemovedReceipt.objects.bulk_create(
            [RemovedReceipt(receipt_id=pk, issued_at=issued, removed_at=now) for pk, issued in gone],
            ignore_conflicts=True,
        )
        # Refunds first: a sale's refunds protect it (Receipt.refund_of).
        refunds.delete()
        Receipt.objects.filter(pk__in=sale_ids).delete()
    return len(gone)


def mark_keyed(receipt: Receipt) -> None:
    """Record that ``receipt``'s sale was also sent with its merchant's key."""
    Receipt.objects.filter(pk=receipt.pk).update(keyed=True)
    receipt.keyed = True


def set_aside(holder: Receipt, claimed: str) -> bool:
    """Give ``holder`` a fresh token and short code, and record what it had (SetAside), so
    that a sale it gives way to (receipts.creation) can take the ones it claimed
    (``claimed``: "token" or "short code", for the log): a test receipt, or a live one made
    without its merchant's key. Returns False, changing nothing, if a live ``holder`` was
    made with a key meanwhile."""
    still = Q(pk=holder.pk) & (Q(livemode=False) | Q(keyed=False))
    for _ in range(MAX_CODE_ATTEMPTS):
        try:
            with transaction.atomic():  # a savepoint when a transaction is open
                taken = Receipt.objects.filter(still).update(
                    token=new_token(), short_code=new_short_code(), updated_at=timezone.now()
                )
                if taken:
                    replicas.wrote(holder.token, holder.short_code)  # they now name the keyed sale
                    SetAside.objects.create(
                        receipt_id=holder.pk, claimed_token=holder.token, claimed_short_code=holder.short_code
                    )
                    hooks.committed(Change(hooks.SET_ASIDE, holder))
            break
        except IntegrityError:  # the fresh short code was taken: draw again
            continue
    else:
        raise RuntimeError(f"no free short code after {MAX_CODE_ATTEMPTS} attempts")
    if taken and not holder.livemode:
        logger.warning(
            "test receipt %s of merchant %s set aside: a live sale claims its %s",
            holder.pk,
            holder.merchant_id,
            claimed,
        )
    elif taken:
        logger.warning(
            "receipt %s of merchant %s, made without a key, set aside: a sale sent with its merchant's key "
            "claims its %s",
            holder.pk,
            holder.merchant_id,
            claimed,
        )
    return bool(taken)
