"""E-invoicing: a merchant's settings for reporting to Nigeria's revenue service (NRS), and
the report of each receipt.

Each live receipt of a merchant whose e-invoicing is on gets a Report, written with the
receipt in its transaction (einvoicing.hooks), and a delivery of it in the one outbox on
the ``einvoice`` channel, which the worker sends to NRS (einvoicing.transport): a sale as
an invoice, a refund as a credit note, a void as the cancellation of its sale's invoice.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.validators import RegexValidator
from django.db import models

from einvoicing import vault
from merchants.models import Merchant
from receipts.models import Receipt

# The outbox's channel of reports to NRS (messaging.transports).
EINVOICE = "einvoice"

service_id_validator = RegexValidator(
    r"^[A-Z0-9]{8}$", "Eight letters and digits, as NRS gave them to your business (e.g. 94ND90NR)."
)
business_id_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$", "Letters, digits and dashes, as your NRS dashboard shows it."
)


@dataclass(frozen=True)
class Credentials:
    """A merchant's NRS credentials, unsealed: for the request that uses them, never kept."""

    api_key: str
    api_secret: str
    crypto_keys: str  # the text of crypto_keys.txt


class EInvoicing(models.Model):
    """A merchant's e-invoicing settings: whether every live receipt is reported to NRS, and
    what NRS knows the business by. The API key, the API secret and the crypto keys file are
    sealed (einvoicing.vault): stored encrypted, never shown again once saved."""

    merchant = models.OneToOneField(Merchant, on_delete=models.CASCADE, related_name="einvoicing")
    enabled = models.BooleanField(
        "report every live receipt to NRS",
        default=False,
        help_text="Each sale, refund and void is reported within minutes, by the service's worker.",
    )
    business_id = models.CharField(
        "business id",
        max_length=64,
        validators=[business_id_validator],
        help_text="Your business's id on the NRS e-invoicing dashboard (e.g. 800a1faf-4b81-4b6e-bbe0-cfeb6ca31d4a).",
    )
    service_id = models.CharField(
        "service id",
        max_length=8,
        validators=[service_id_validator],
        help_text="The 8 letters and digits NRS gave your business (e.g. 94ND90NR): the middle of every IRN.",
    )
    # The rest of the business's postal address as NRS records it: the street is the shop's
    # address (Shop details), the country its country.
    city = models.CharField(max_length=100, help_text="The city of the shop's address, as NRS records it.")
    postal_zone = models.CharField("postal code", max_length=20, help_text="e.g. 100001")
    # Sealed (einvoicing.vault); empty until given.
    sealed_api_key = models.TextField(blank=True, editable=False)
    sealed_api_secret = models.TextField(blank=True, editable=False)
    sealed_crypto_keys = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "e-invoicing (NRS)"
        verbose_name_plural = "e-invoicing (NRS)"

    def __str__(self) -> str:
        return f"E-invoicing of {self.merchant.name}" if self.merchant_id else "E-invoicing"

    def clean_fields(self, exclude=None):
        self.service_id = self.service_id.strip().upper()
        self.business_id = self.business_id.strip()
        super().clean_fields(exclude)

    @property
    def has_credentials(self) -> bool:
        return bool(self.sealed_api_key and self.sealed_api_secret and self.sealed_crypto_keys)

    def set_credentials(self, *, api_key: str = "", api_secret: str = "", crypto_keys: str = "") -> list[str]:
        """Seal each credential given (a blank one keeps what is stored); not saved. Returns
        the names of those that changed. Raises vault.VaultClosed without a key."""
        changed = []
        for name, value in (("api_key", api_key), ("api_secret", api_secret), ("crypto_keys", crypto_keys)):
            if value:
                setattr(self, f"sealed_{name}", vault.seal(value))
                changed.append(name)
        return changed

    def credentials(self) -> Credentials:
        """The credentials, unsealed. Raises vault.VaultClosed."""
        return Credentials(
            vault.unseal(self.sealed_api_key),
            vault.unseal(self.sealed_api_secret),
            vault.unseal(self.sealed_crypto_keys),
        )


class Report(models.Model):
    """One document reported to NRS about a receipt, and where that stands: the invoice of
    a sale, the credit note of a refund, or the cancellation of a voided sale's invoice
    (its ``irn`` is then the sale's)."""

    class Document(models.TextChoices):
        INVOICE = "invoice", "Invoice"
        CREDIT_NOTE = "credit_note", "Credit note"
        CANCELLATION = "cancellation", "Cancellation"

    class State(models.TextChoices):
        WAITING = "waiting", "Waiting"  # not reported yet: queued, or tried and to be tried again
        REPORTED = "reported", "Reported"  # NRS signed (or cancelled) it
        REFUSED = "refused", "Refused"  # NRS refused it, or it could not be sent in time: ``message`` says why

    # No constraint in the database, only in Django (which still cascades): every sale of a
    # merchant that reports takes its own lock on the merchant's row already.
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    # The unique constraint below leads with it: it is also its index.
    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="einvoice_reports", db_index=False)
    document = models.CharField(max_length=16, choices=Document.choices)
    irn = models.CharField("IRN", max_length=100)
    state = models.CharField(max_length=16, choices=State.choices, default=State.WAITING)
    # Why it is not reported: NRS's message when refused, the last failure while waiting.
    message = models.CharField(max_length=500, blank=True)
    # What NRS answered its signing with (its stamp), as it answered.
    stamp = models.JSONField(null=True, blank=True)
    # What the NRS QR code encodes (einvoicing.qr), made when it was stamped.
    qr_payload = models.TextField(blank=True)
    reported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["receipt", "document"], name="einvoice_report_receipt_document"),
        ]
        indexes = [
            # A merchant's reports by state, newest first: what is waiting or refused (einvoicing.state).
            models.Index(fields=["merchant", "state", "-created_at"], name="einvoice_report_state"),
        ]

    def __str__(self) -> str:
        return f"{self.get_document_display()} {self.irn}"
