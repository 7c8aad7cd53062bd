import zoneinfo
from datetime import datetime, timedelta

import phonenumbers
from auditlog.models import AbstractLogEntry, LogEntryManager
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from merchants.colors import HOUSE_ACCENT_COLOR, validate_accent_color
from merchants.numbering import default_prefix, normalize_prefix, validate_prefix
from merchants.registration import normalize_registration_number, validate_registration_number
from receco.errors import Forbidden
from receco.lib.lookups import Lookup

TEST_MERCHANT_PREFIX = "test-"
MERCHANT_SUSPENDED = "Merchant account is suspended"

string_id_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    "Use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit.",
)
DEFAULT_COUNTRY = "NG"
DEFAULT_TIME_ZONE = "Africa/Lagos"


def validate_country(value: str) -> None:
    """A two-letter country code (ISO 3166-1 alpha-2) such as NG."""
    if value not in phonenumbers.SUPPORTED_REGIONS:
        raise ValidationError("Enter a two-letter country code in capitals, such as NG or GH.")


def validate_time_zone(value: str) -> None:
    """A time zone of the IANA database, such as Africa/Lagos."""
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError("Enter a time zone name such as Africa/Lagos or Africa/Accra.") from None


tax_scheme_validator = RegexValidator(r"^[A-Z][A-Z0-9_]{1,31}$", "Use capitals, digits and '_', e.g. NG_TIN.")


class MerchantQuerySet(models.QuerySet):
    def for_sale(self, string_id: str, display_name: str | None = None) -> "Merchant":
        """Return the merchant a POS sale names. An unknown ``test-`` id gives a new test
        merchant that is not saved yet: it is saved with the sale's receipt, in the same
        transaction, so a sale that fails leaves no merchant behind.

        Raises Merchant.DoesNotExist for any other unknown id.
        """
        try:
            return _BY_STRING_ID.get(string_id)
        except self.model.DoesNotExist:
            if not string_id.startswith(TEST_MERCHANT_PREFIX):
                raise
        return self.model.new_test_merchant(string_id, display_name)

    def for_key(self, string_id: str) -> "Merchant":
        """Return the merchant an operator makes a key for. An unknown ``test-`` id is
        created as its first sale would create it, so that a test key can be had before
        that sale. Raises Merchant.DoesNotExist for any other unknown id."""
        try:
            return self.get(string_id=string_id)
        except self.model.DoesNotExist:
            if not string_id.startswith(TEST_MERCHANT_PREFIX):
                raise
        new = self.model.new_test_merchant(string_id)
        new.full_clean(exclude=["string_id"], validate_unique=False)
        string_id_validator(string_id)
        # get_or_create: a first sale of the same merchant may be saving it at this moment.
        merchant, _ = self.get_or_create(
            string_id=string_id,
            defaults={"name": new.name, "is_test": new.is_test, "require_api_key": new.require_api_key},
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
        default=True,
        help_text=(
            "Only requests carrying this merchant's API key may create its receipts. Customers read their "
            "receipts and ask for copies without a key either way."
        ),
    )
    is_test = models.BooleanField(
        "test merchant",
        default=False,
        help_text="Every receipt of a test merchant is a test receipt.",
    )
    # The business's legal identity, as a tax receipt states it (shown on every receipt
    # page, email, printed copy and Open Receipt Format document, as the record is now).
    legal_name = models.CharField(max_length=200, blank=True, help_text="As registered, e.g. “Mama Put Foods Ltd”.")
    address = models.TextField(max_length=500, blank=True)
    phone = models.CharField(max_length=40, blank=True, help_text="A number customers may call.")
    support_email = models.EmailField(
        blank=True, help_text="Where customers' replies to receipt emails go (their reply-to)."
    )
    tax_id_scheme = models.CharField(
        "tax identifier scheme",
        max_length=32,
        blank=True,
        validators=[tax_scheme_validator],
        help_text="e.g. NG_TIN for a Nigerian Taxpayer Identification Number.",
    )
    tax_id = models.CharField("tax identifier", max_length=64, blank=True)
    registration_number = models.CharField(
        "registration number",
        max_length=16,
        blank=True,
        validators=[validate_registration_number],
        help_text="CAC: RC, BN or IT and its digits, e.g. RC1234567 (spaces and dashes are left out).",
    )
    # The legal identity Receco's operator checked (against the company registry, CAC): what
    # the verify page calls verified, and what every receipt logged since signs as its
    # merchant's identity (receipts.signing). Only the operator edits it; the owner's legal
    # name above, and the name on receipts, are the merchant's own words.
    checked_legal_name = models.CharField(
        "checked legal name",
        max_length=200,
        blank=True,
        default="",
        db_default="",  # what processes of the release before write, during a rolling upgrade
        help_text="The legal name as Receco checked it in the registry. Blank: not checked.",
    )
    checked_registration_number = models.CharField(
        "checked registration number",
        max_length=16,
        blank=True,
        default="",
        db_default="",
        validators=[validate_registration_number],
        help_text="RC, BN or IT and its digits, as Receco checked it.",
    )
    receipt_prefix = models.CharField(
        "receipt number prefix",
        max_length=10,
        blank=True,
        validators=[validate_prefix],
        help_text="Begins every receipt number: MP gives MP-2026-000123. Capitals and digits; blank: the first "
        "letters of the merchant id. A new prefix starts a new series at 1.",
    )
    country = models.CharField(max_length=2, default=DEFAULT_COUNTRY, validators=[validate_country])
    time_zone = models.CharField(
        max_length=64,
        default=DEFAULT_TIME_ZONE,
        validators=[validate_time_zone],
        help_text="Every date on receipts and in the dashboard is shown in it.",
    )
    return_policy = models.TextField(max_length=1000, blank=True, help_text="Printed on every receipt.")
    receipt_footer = models.TextField(max_length=500, blank=True, help_text="A line for the foot of every receipt.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MerchantQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.string_id})"

    @classmethod
    def new_test_merchant(cls, string_id: str, display_name: str | None = None) -> "Merchant":
        """An unsaved ``test-`` merchant as the first sale naming it makes it: anyone may
        use it, so it requires no key, and all of its receipts are test receipts."""
        return cls(string_id=string_id, name=display_name or string_id, is_test=True, require_api_key=False)

    def clean_fields(self, exclude=None):
        # Normalized before the validators see it: "RC 1234567" is RC1234567, not an error.
        self.registration_number = normalize_registration_number(self.registration_number)
        self.checked_registration_number = normalize_registration_number(self.checked_registration_number)
        self.receipt_prefix = normalize_prefix(self.receipt_prefix)
        super().clean_fields(exclude)

    @property
    def number_prefix(self) -> str:
        """What its receipt numbers begin with: the prefix it chose, else one from its id."""
        return self.receipt_prefix or default_prefix(self.string_id)

    @property
    def is_suspended(self) -> bool:
        return self.status == self.Status.SUSPENDED

    def check_active(self) -> None:
        """Raise Forbidden if the merchant is suspended: its keys and its POS are refused."""
        if self.status == self.Status.SUSPENDED:
            raise Forbidden(MERCHANT_SUSPENDED)

    @property
    def belongs_to_nobody(self) -> bool:
        """``test-`` merchants belong to nobody: anyone may make, refund and void their
        (test) receipts without a key, and their sales give their own name, logo and
        colour. A registered merchant's receipts carry the name, logo and colour of its
        record, whatever a request says."""
        return self.string_id.startswith(TEST_MERCHANT_PREFIX)

    @property
    def identity_checked(self) -> bool:
        """Whether Receco's operator checked the merchant's legal identity (``checked_legal_name``)."""
        return bool(self.checked_legal_name)

    @property
    def tax_identifier(self) -> tuple[str, str] | None:
        """(scheme, value) of the merchant's tax identifier, if it has one."""
        return (self.tax_id_scheme or "TAX_ID", self.tax_id) if self.tax_id else None

    def set_suspended(self, suspended: bool) -> bool:
        """Suspend (or reactivate) the merchant; return whether anything changed.

        A suspended merchant's keys answer 403 and no new receipts are accepted for it;
        customers can still read the receipts they already hold.
        """
        status = self.Status.SUSPENDED if suspended else self.Status.ACTIVE
        if self.status == status:
            return False
        self.status = status
        self.save(update_fields=["status", "updated_at"])
        return True


# A sale names its merchant by its id: the look-up every sale makes (receco.lib.lookups).
_BY_STRING_ID = Lookup(Merchant, "string_id")


class MembershipQuerySet(models.QuerySet):
    def merchant_ids_for(self, user, *, roles: tuple[str, ...] | None = None) -> list[int]:
        """Return the ids of the merchants ``user`` acts for (optionally only in ``roles``)."""
        memberships = self.filter(user=user)
        if roles is not None:
            memberships = memberships.filter(role__in=roles)
        return list(memberships.values_list("merchant_id", flat=True))


class MerchantMembership(models.Model):
    """A staff user acting for a merchant in the admin dashboard.

    Owners manage the merchant's settings and API keys; members only look (keys,
    receipts, usage). Suspending a merchant is for superusers (the operator) alone.
    """

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = "team member"
        constraints = [
            # Also the index of merchant_ids_for(): every admin page of a staff user.
            models.UniqueConstraint(fields=["user", "merchant"], name="membership_user_merchant_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} – {self.merchant.string_id} ({self.get_role_display()})"


class Invitation(models.Model):
    """An owner's invitation to join a merchant's team (dashboard.team): a link sent by email
    that makes the invitee's account and sets its password, once, within VALIDITY (72 hours).
    Only a digest of the link's secret is stored."""

    VALIDITY = timedelta(hours=72)

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(
        max_length=16, choices=MerchantMembership.Role.choices, default=MerchantMembership.Role.MEMBER
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(editable=False)
    accepted_at = models.DateTimeField(null=True, blank=True, editable=False)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.merchant.string_id} ({self.get_role_display()})"

    def usable(self, now: datetime | None = None) -> bool:
        """Whether the link still works: not used and not expired."""
        return self.accepted_at is None and (now or timezone.now()) < self.expires_at


class TwoStepLink(models.Model):
    """A link that lets one dashboard user set up two-step sign-in (dashboard.enrolment):
    proof beyond the password, emailed to the user's address or given by the operator.
    It works once, until ``expires_at``, in a session signed in as that user; making a new
    one retires the user's others. Only a digest of its secret is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"two-step set-up link of {self.user}"


class ApiKey(models.Model):
    """A merchant's API key. Only the public lookup id and a digest are stored; the key
    itself is shown once when it is made (merchants.keys) and can never be seen again."""

    class Type(models.TextChoices):
        TEST = "test", "Test"
        LIVE = "live", "Live"

    class State(models.TextChoices):
        ACTIVE = "active", "Active"
        EXPIRING = "expiring", "Expiring (rotated)"
        EXPIRED = "expired", "Expired"
        REVOKED = "revoked", "Revoked"

    # Keys older than this are flagged "rotation due" (the advice is to rotate every 90 days).
    ROTATION_PERIOD = timedelta(days=90)
    # last_used_at is exact to this much.
    LAST_USED_RESOLUTION = timedelta(minutes=1)

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="api_keys")
    type = models.CharField(max_length=4, choices=Type.choices)
    name = models.CharField(max_length=100, blank=True, help_text="What uses this key, e.g. “Till 3, Lekki”.")
    # The unique constraint is the index of authentication: one query per request.
    lookup_id = models.CharField("public id", max_length=12, unique=True, editable=False)
    digest = models.CharField(max_length=64, editable=False)
    # What the key's holder signs the receipt tokens it makes offline with (merchants.keys.
    # token_secret): a claim of such a token by another merchant is refused (receipts.claims).
    # Empty for keys made before it existed, until their first request (learn_token_secret).
    token_secret = models.CharField(max_length=64, blank=True, default="", editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField("last used", null=True, blank=True, editable=False)
    expires_at = models.DateTimeField("expires", null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField("revoked", null=True, blank=True, editable=False)
    rotated_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rotated_from", editable=False
    )

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        indexes = [
            # The admin's key list of one merchant, newest first.
            models.Index(fields=["merchant", "-created_at"], name="apikey_merchant_created"),
        ]

    def __str__(self) -> str:
        label = self.name or f"{self.get_type_display()} key"
        return f"{label} ({self.prefix}…)"

    @property
    def prefix(self) -> str:
        """The visible start of the key, e.g. ``poslive_3kTq9ZxW1bNa``: safe to show and log."""
        return f"pos{self.type}_{self.lookup_id}"

    @property
    def is_live(self) -> bool:
        return self.type == self.Type.LIVE

    def state(self, now: datetime | None = None) -> str:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return self.State.REVOKED
        if self.expires_at is not None:
            return self.State.EXPIRED if self.expires_at <= now else self.State.EXPIRING
        return self.State.ACTIVE

    def is_usable(self, now: datetime | None = None) -> bool:
        return self.state(now) in (self.State.ACTIVE, self.State.EXPIRING)

    def note_used(self, now: datetime) -> None:
        """Set ``last_used_at``, unless it was set less than LAST_USED_RESOLUTION ago: no
        database write on every request."""
        if self.last_used_at is not None and now - self.last_used_at < self.LAST_USED_RESOLUTION:
            return
        stale = models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lt=now - self.LAST_USED_RESOLUTION)
        # The condition keeps concurrent processes from all writing in the same minute.
        ApiKey.objects.filter(stale, pk=self.pk).update(last_used_at=now)
        self.last_used_at = now

    def rotation_due(self, now: datetime | None = None) -> bool:
        """True for an active key created more than ROTATION_PERIOD ago and not yet rotated."""
        now = now or timezone.now()
        return self.state(now) == self.State.ACTIVE and self.created_at <= now - self.ROTATION_PERIOD


class KeyUsage(models.Model):
    """Calls made with one API key on one UTC day, flushed from the cache counters
    (merchants.usage) so that counting costs no database write per request."""

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="usage")
    day = models.DateField()
    requests = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name = "key usage"
        verbose_name_plural = "key usage"
        constraints = [
            # Also the index of the flush's upsert and of the usage chart's range query.
            models.UniqueConstraint(fields=["api_key", "day"], name="keyusage_key_day_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.api_key.prefix} {self.day}: {self.requests}"


def merchant_id_of(instance) -> int | None:
    """The id of the merchant an audited object belongs to (its audit entries' scope): its
    own for a merchant, its sale's for a void, else its ``merchant``."""
    if isinstance(instance, Merchant):
        return instance.pk
    if hasattr(instance, "merchant_id"):
        return instance.merchant_id
    receipt = getattr(instance, "receipt", None)
    return None if receipt is None else receipt.merchant_id


class AuditEntryManager(LogEntryManager):
    def log_create(self, instance, force_log: bool = False, **kwargs):
        """django-auditlog's entry for ``instance``, filed under the merchant it belongs to."""
        kwargs.setdefault("merchant_id", merchant_id_of(instance))
        return super().log_create(instance, force_log, **kwargs)


class AuditEntry(AbstractLogEntry):
    """One staff action that moved money or access (merchants.audit): who, when, from which
    address, what changed; written by django-auditlog (AUDITLOG_LOGENTRY_MODEL), never
    edited or deleted from the dashboard. ``merchant`` scopes it as every dashboard row is
    scoped: owners and members read their shop's, the operator reads all."""

    # No database constraint: the trail outlives whatever it names.
    merchant = models.ForeignKey(
        Merchant, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )

    objects = AuditEntryManager()

    class Meta(AbstractLogEntry.Meta):
        verbose_name = "audit trail entry"
        verbose_name_plural = "audit trail entries"
        indexes = [models.Index(fields=["merchant", "-timestamp"], name="auditentry_merchant_time")]
