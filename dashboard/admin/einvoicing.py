"""E-invoicing in the merchant dashboard: an owner switches reporting to NRS on and gives
what NRS knows the business by (its business id, service id, the rest of its address) and
its credentials (the API key and secret and the crypto keys file from the NRS dashboard).

Owners alone see it, for their own merchants (dashboard.scoping); the operator sees all.
A credential is sealed as it is saved (einvoicing.vault) and never shown again: the form
only says which are saved, and a blank field keeps the one saved. Every change is in the
audit trail, a credential only as "changed" (EInvoicingConfig.ready).
"""

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import ValidationError

from dashboard.scoping import MerchantScopedAdmin, merchant_ids
from einvoicing import invoices, qr, vault
from einvoicing.models import EInvoicing
from merchants.models import Merchant

MAX_KEYS_FILE_BYTES = 64 * 1024
KEEPS = "Leave blank to keep the one saved: it is never shown again."
NO_URL = (
    "The service's operator has not set RECECO_EINVOICING_URL (where NRS's API is): reporting cannot be switched on yet"
)
TEST_MERCHANT = "A test merchant's receipts are test receipts, which are never reported"
REQUIRED = "Required: the service cannot report without it"
FROM_DASHBOARD = f"From your NRS dashboard. {KEEPS}"
_SECRET = {"autocomplete": "off"}


class EInvoicingForm(forms.ModelForm):
    api_key = forms.CharField(
        label="API key",
        required=False,
        widget=forms.PasswordInput(attrs=_SECRET),
        help_text=f"From your NRS dashboard. {KEEPS}",
    )
    api_secret = forms.CharField(
        label="API secret",
        required=False,
        widget=forms.PasswordInput(attrs=_SECRET),
        help_text=f"From your NRS dashboard. {KEEPS}",
    )
    crypto_keys = forms.FileField(
        label="Crypto keys file",
        required=False,
        help_text="crypto_keys.txt, as your NRS dashboard downloads it (Key Management): its public key makes "
        f"the NRS QR code of every receipt. {KEEPS}",
    )

    class Meta:
        model = EInvoicing
        fields = ["merchant", "enabled", "business_id", "service_id", "city", "postal_zone"]

    def clean_service_id(self):
        return self.cleaned_data["service_id"].strip().upper()

    def clean_crypto_keys(self) -> str:
        upload = self.cleaned_data.get("crypto_keys")
        if not upload:
            return ""
        if upload.size > MAX_KEYS_FILE_BYTES:
            raise ValidationError("This is not a crypto_keys.txt: it is far too large")
        try:
            text = upload.read().decode()
        except UnicodeDecodeError:
            raise ValidationError(qr.NOT_A_KEYS_FILE) from None
        try:
            qr.parse_keys(text)
        except qr.BadKeysFile as problem:
            raise ValidationError(str(problem)) from None
        return text

    def clean(self):
        data = super().clean()
        if not vault.available():
            raise ValidationError(vault.NO_KEYS)
        stored = {
            "api_key": self.instance.sealed_api_key,
            "api_secret": self.instance.sealed_api_secret,
            "crypto_keys": self.instance.sealed_crypto_keys,
        }
        for name, sealed in stored.items():
            if not data.get(name) and not sealed and name not in self.errors:
                self.add_error(name, REQUIRED)
        merchant = data.get("merchant") or (self.instance.merchant if self.instance.merchant_id else None)
        if data.get("enabled") and merchant is not None:
            if merchant.is_test:
                raise ValidationError(TEST_MERCHANT)
            missing = [label for field, label in invoices.MISSING.items() if not getattr(merchant, field).strip()]
            if missing:
                raise ValidationError(f"Before reporting, fill in {', '.join(missing)} in Shop details")
            if not settings.RECECO_EINVOICING_URL:
                raise ValidationError(NO_URL)
        return data

    def save(self, commit=True):
        setup = super().save(commit=False)
        data = self.cleaned_data
        setup.set_credentials(api_key=data["api_key"], api_secret=data["api_secret"], crypto_keys=data["crypto_keys"])
        if commit:
            setup.save()
        return setup


@admin.register(EInvoicing)
class EInvoicingAdmin(MerchantScopedAdmin):
    list_title = "E-invoicing (NRS)"
    change_title = "E-invoicing (NRS)"
    form = EInvoicingForm
    owners_may_add = True
    owners_may_change = True
    list_display = ["merchant", "enabled", "service_id", "saved_credentials"]
    fieldsets = [
        (None, {"fields": ["merchant", "enabled"]}),
        (
            "Your business at NRS",
            {
                "fields": ["business_id", "service_id", "city", "postal_zone"],
                "description": "As your NRS e-invoicing dashboard shows them. Every receipt's IRN is its number, "
                "your service id and its date: MP2026000123-94ND90NR-20261122.",
            },
        ),
        ("Credentials", {"fields": ["api_key", "api_secret", "crypto_keys", "saved_credentials"]}),
    ]

    def get_readonly_fields(self, request, obj=None):
        return ["merchant", "saved_credentials"] if obj is not None else ["saved_credentials"]

    def merchant_choices(self):
        return Merchant.objects.filter(is_test=False, einvoicing__isnull=True)

    @admin.display(description="credentials saved")
    def saved_credentials(self, setup: EInvoicing) -> str:
        saved = [
            label
            for label, sealed in (
                ("API key", setup.sealed_api_key),
                ("API secret", setup.sealed_api_secret),
                ("crypto keys file", setup.sealed_crypto_keys),
            )
            if sealed
        ]
        return ", ".join(saved) if saved else "none yet"

    # Owners only: the settings of a shop's reporting are its owners' business, as its keys are.
    def has_module_permission(self, request):
        return merchant_ids(request, owner=True) != []

    def has_view_permission(self, request, obj=None):
        return self._owner_may(request, obj)
