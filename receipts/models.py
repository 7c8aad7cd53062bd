from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from merchants.colors import validate_accent_color

if TYPE_CHECKING:
    from receipts.codes import Reference


class ReceiptQuerySet(models.QuerySet):
    def by_reference(self, reference: Reference) -> Receipt:
        """Return the receipt a token or short code names; one indexed query.

        Raises Receipt.DoesNotExist.
        """
        return self.get(**{reference.field: reference.value})


class Receipt(models.Model):
    """The immutable record of one completed sale; only the contact fields change."""

    # Both unique constraints are also the lookup indexes for getReceipt.
    token = models.CharField(max_length=64, unique=True)
    short_code = models.CharField(max_length=6, unique=True)
    merchant = models.ForeignKey("merchants.Merchant", on_delete=models.PROTECT, related_name="receipts")
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
    customer_email = models.EmailField(max_length=254, null=True, blank=True)
    customer_phone = models.CharField(max_length=16, null=True, blank=True, help_text="E.164")
    # SHA-256 of the creation request (short code excluded): a replay of the same
    # token with the same content is answered idempotently, different content is 409.
    fingerprint = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ReceiptQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Admin receipt list and usage charts: one merchant's receipts by date.
            models.Index(fields=["merchant", "-created_at"], name="receipt_merchant_created"),
        ]

    def __str__(self) -> str:
        return f"{self.short_code} {self.merchant_name}"

    @property
    def is_test(self) -> bool:
        return not self.livemode

    @property
    def public_url(self) -> str:
        """The absolute address customers open, under RECECO_WEB_URL."""
        return f"{settings.RECECO_WEB_URL}/app/receipt/{self.token}"
