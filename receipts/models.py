from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import F
from django.db.models.fields.json import KT
from django.db.models.functions import Lower
from django.urls import reverse

from merchants.colors import validate_accent_color
from receco.lib.lookups import Lookup
from receipts.codes import SHORT_CODE_LENGTH, TOKEN_MAX_LENGTH
from receipts.numbering import receipt_number

if TYPE_CHECKING:
    from receipts.codes import Reference


# What the dashboard's search (dashboard.search) looks up beside plain columns; its indexes
# are made on these very expressions, which a query must repeat to be answered by them.
CARD_LAST4 = KT("details__payment_details__card_last4")
EMAIL_LOWER = Lower("customer_email")


_BY_REFERENCE: dict[str, Lookup] = {}  # by field: token, short_code


class ReceiptManager(models.Manager):
    def by_reference(self, reference: Reference, using: str | None = None) -> Receipt:
        """Return the receipt a token or short code names, from the database ``using``
        (the primary by default); one indexed query.

        Raises Receipt.DoesNotExist.
        """
        lookup = _BY_REFERENCE.get(reference.field)
        if lookup is None:
            lookup = _BY_REFERENCE[reference.field] = Lookup(self.model, reference.field)
        return lookup.get(reference.value, using)


class Receipt(models.Model):
    """The immutable record of one completed sale; only the contact fields change."""

    # Unique by the constraints below, which are also the lookup indexes for getReceipt.
    token = models.CharField(max_length=TOKEN_MAX_LENGTH)
    short_code = models.CharField(max_length=SHORT_CODE_LENGTH)
    # No index of its own: the indexes below that lead with it serve every query by merchant.
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="receipts", db_index=False
    )
    # Display fields as the POS gave them at sale time, so a later rebrand of the
    # merchant does not rewrite old receipts.
    merchant_name = models.CharField(max_length=200)
    merchant_logo = models.URLField(max_length=500, null=True, blank=True)
    accent_color = models.CharField(max_length=7, validators=[validate_accent_color])
    total_amount = models.BigIntegerField(help_text="Minor currency units (kobo, cents).")
    currency = models.CharField(max_length=3)
    transaction_date = models.DateTimeField()
    items = models.JSONField(help_text="List of {name, quantity, unit_price, total_price[, sku]}.")
    category = models.CharField(max_length=100, null=True, blank=True)
    payment_method = models.CharField(max_length=50, null=True, blank=True)
    location = models.CharField(max_length=200, null=True, blank=True)
    status = models.CharField(max_length=32, default="completed")
    livemode = models.BooleanField(default=True, help_text="False for test receipts.")
    # Created on the owning merchant's authority: with its API key, or by its staff in the
    # dashboard (a refund or void there). Nothing sent without that authority can take a
    # keyed sale's token or short code: a receipt made without it that holds them when
    # the keyed sale arrives is set aside (receipts.creation, SetAside).
    keyed = models.BooleanField("created with the merchant's key", default=False, db_default=False)
    # What the POS sent beyond the total: subtotal, discount, tip, tax lines and payment
    # details (only those given); for a refund, what it refunds and why; for a sale that
    # was refunded, its refunds. In one column: most sales have none of it, and getReceipt
    # answers all of it from this row alone (receipts.rendering.representation).
    details = models.JSONField(null=True, blank=True)
    # A refund is a receipt of its own (receipt_type "refund"), of this sale.
    refund_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="refunds", editable=False
    )
    customer_email = models.EmailField(max_length=254, null=True, blank=True)
    customer_phone = models.CharField(max_length=16, null=True, blank=True, help_text="E.164")
    # How the customer asked for the receipt at that number: "sms", "whatsapp"; None: sms.
    customer_phone_channel = models.CharField(max_length=16, null=True, blank=True)
    # SHA-256 of the creation request (short code excluded): a replay of the same
    # token with the same content is answered idempotently, different content is 409.
    fingerprint = models.CharField(max_length=64, editable=False)
    # Its number, ``number`` of the series ``number_series`` (receipts.numbering), drawn
    # by the writer as the row is inserted; both null for receipts stored before numbers.
    number_series = models.CharField(max_length=64, null=True, blank=True, editable=False)
    number = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ReceiptManager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Admin receipt list and usage charts: one merchant's receipts by date.
            models.Index(fields=["merchant", "-created_at"], name="receipt_merchant_created"),
            # The dashboard's search (dashboard.search), exact look-ups of one merchant's
            # sales or, for the operator, of all: by amount; by the card's last four and the
            # customer's email or phone, kept small by leaving out the sales without them
            # (a look-up's equality implies the condition, so the index still answers it).
            models.Index(fields=["total_amount", "merchant"], name="receipt_amount_merchant"),
            models.Index(CARD_LAST4, name="receipt_card_last4", condition=models.Q(details__isnull=False)),
            # The contact's two serve the search and the customer's locker (locker.listing):
            # the receipts sent to one phone number or email address (whatever the case its
            # shops wrote it in), newest first, and a date searched among them.
            models.Index(
                fields=["customer_phone", "-transaction_date"],
                name="receipt_phone_date",
                condition=models.Q(customer_phone__isnull=False),
            ),
            models.Index(
                EMAIL_LOWER,
                F("transaction_date").desc(),
                name="receipt_email_date",
                condition=models.Q(customer_email__isnull=False),
            ),
            # A day or days of one merchant's sales: the search and the sale date filter.
            models.Index(fields=["merchant", "transaction_date"], name="receipt_merchant_sold"),
        ]
        constraints = [
            # Constraints, not unique=True: PostgreSQL then gets no second (LIKE) index of each,
            # which no query uses. Named as unique=True had them made.
            models.UniqueConstraint(fields=["token"], name="receipts_receipt_token_key"),
            models.UniqueConstraint(fields=["short_code"], name="receipts_receipt_short_code_key"),
            # No number twice, whatever the counter says; also the dashboard's search by number.
            models.UniqueConstraint(
                fields=["merchant", "number_series", "number"],
                condition=models.Q(number__isnull=False),
                name="receipt_merchant_number_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.short_code} {self.merchant_name}"

    def get_absolute_url(self) -> str:
        return reverse("receipts:receipt", kwargs={"reference": self.token})

    @property
    def is_test(self) -> bool:
        return not self.livemode

    @property
    def receipt_number(self) -> str | None:
        """``MP-2026-000123``, or None for a receipt stored before receipts were numbered."""
        return receipt_number(self.number_series, self.number)

    @property
    def receipt_type(self) -> str:
        return "refund" if self.refund_of_id else "sale"

    def detail(self, name: str, default=None):
        """One entry of ``details`` (None, or ``default``, when absent)."""
        return (self.details or {}).get(name, default)

    @property
    def public_url(self) -> str:
        """The absolute address customers open, under RECECO_WEB_URL."""
        return f"{settings.RECECO_WEB_URL}/app/receipt/{self.token}"

    @property
    def message_url(self) -> str:
        """The link a message sent to the customer carries: by short code, which the service
        chose or checked, never the token, which a POS may have chosen to say anything it
        likes ("Call-0803…-to-claim-your-prize"). It leads to ``public_url``."""
        return f"{settings.RECECO_WEB_URL}/app/receipt/{self.short_code}"


class ReceiptSeries(models.Model):
    """A series of receipt numbers (receipts.numbering): the last number its merchant
    gave in it. The writer takes the next one as it inserts a receipt, which locks this
    row (and only this one) until the receipt is stored."""

    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.CASCADE, related_name="+", db_index=False
    )  # the constraint below leads with it
    name = models.CharField(max_length=64)
    last = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "receipt series"
        constraints = [
            # The conflict target of the upsert that draws every receipt's number.
            models.UniqueConstraint(fields=["merchant", "name"], name="receiptseries_merchant_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.last}"


class Void(models.Model):
    """A sale that was cancelled (voidReceipt): when, why, and whether with the merchant's key.
    The receipt's status is "voided"."""

    receipt = models.OneToOneField(Receipt, on_delete=models.CASCADE, related_name="void")
    reason = models.CharField(max_length=200, blank=True)
    keyed = models.BooleanField("with the merchant's key", default=False)
    created_at = models.DateTimeField("voided at", auto_now_add=True)

    def __str__(self) -> str:
        return f"void of {self.receipt_id}"


# A gift receipt's code: "G" and six of the service's short code letters (receipts.gifts),
# seven characters, so that it is never a receipt's short code (six) nor a token (eight or more).
GIFT_CODE_LENGTH = 7


class GiftReceipt(models.Model):
    """A sale's gift receipt (receipts.gifts): its items and the shop's return policy, no
    prices, at a link of its own (``token``) and with a code of its own that the shop finds
    the sale by (``code``). One per sale; it names nothing of the sale's amounts, payment
    or customer, and goes with the sale."""

    receipt = models.OneToOneField(Receipt, on_delete=models.CASCADE, related_name="gift")
    token = models.CharField(max_length=TOKEN_MAX_LENGTH, unique=True)
    code = models.CharField(max_length=GIFT_CODE_LENGTH, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gift receipt {self.code}"

    def get_absolute_url(self) -> str:
        return reverse("receipts:gift", kwargs={"token": self.token})


class SetAside(models.Model):
    """A receipt lost the token or short code it had claimed to a sale it gives way to
    (receipts.creation: a test receipt to a live sale, one made without its merchant's key
    to a sale sent with it): what it had claimed, and when. The receipt itself now has a
    fresh token and short code that nobody was given."""

    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="set_asides")
    claimed_token = models.CharField(max_length=TOKEN_MAX_LENGTH)
    claimed_short_code = models.CharField(max_length=SHORT_CODE_LENGTH)
    created_at = models.DateTimeField("set aside at", auto_now_add=True)

    class Meta:
        verbose_name = "receipt set aside"
        verbose_name_plural = "receipts set aside"

    def __str__(self) -> str:
        return f"{self.claimed_short_code} set aside"


class RemovedReceipt(models.Model):
    """A receipt deleted because its retention ran out (privacy.retention): which one, when
    it was issued and when it went. The receipt log keeps its leaf hash, and ``verifylog``
    reports the entry as removed by retention rather than deleted behind the service's back.
    Nothing personal: the receipt's contact was erased long before."""

    # The deleted receipt's id (a leaf of the log names it); ids are never reused.
    receipt_id = models.BigIntegerField(primary_key=True)
    issued_at = models.DateTimeField()
    removed_at = models.DateTimeField()

    class Meta:
        verbose_name = "receipt removed by retention"
        verbose_name_plural = "receipts removed by retention"

    def __str__(self) -> str:
        return f"receipt {self.receipt_id} removed by retention"
