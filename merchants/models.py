from django.core.validators import RegexValidator
from django.db import models

from merchants.colors import HOUSE_ACCENT_COLOR, validate_accent_color

TEST_MERCHANT_PREFIX = "test-"

string_id_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    "Use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit.",
)


class MerchantQuerySet(models.QuerySet):
    def for_sale(self, string_id: str, display_name: str | None = None) -> "Merchant":
        """Return the merchant a POS sale names, creating ``test-`` merchants on first use.

        Raises Merchant.DoesNotExist for any other unknown id.
        """
        if not string_id.startswith(TEST_MERCHANT_PREFIX):
            return self.get(string_id=string_id)
        merchant, _ = self.get_or_create(
            string_id=string_id,
            defaults={"name": display_name or string_id, "is_test": True},
        )
        return merchant


class Merchant(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUSPENDED = "suspended", "Suspended"

    string_id = models.CharField(
        "merchant id",
        max_length=64,
        unique=True,
        validators=[string_id_validator],
        help_text="The id POS systems send as merchant_string_id.",
    )
    name = models.CharField(max_length=200)
    logo_url = models.URLField("logo URL", max_length=500, blank=True)
    accent_color = models.CharField(
        max_length=7,
        default=HOUSE_ACCENT_COLOR,
        validators=[validate_accent_color],
        help_text="Hex colour such as #0f766e, used on receipt pages.",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    require_api_key = models.BooleanField(
        "require API key",
        default=False,
        help_text="Refuse requests for this merchant that carry no API key.",
    )
    is_test = models.BooleanField(
        "test merchant",
        default=False,
        help_text="Every receipt of a test merchant is a test receipt.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MerchantQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.string_id})"

    @property
    def is_suspended(self) -> bool:
        return self.status == self.Status.SUSPENDED
