"""Webhook endpoints, the events recorded for them, and each delivery and attempt.

An Event is written in the same transaction as the change it reports, with one Delivery
per endpoint that wants it (the outbox: webhooks.outbox); the task runner sends the
deliveries (webhooks.sending) and records every try as an Attempt.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from merchants.models import Merchant
from receipts.models import Receipt


class EventType(models.TextChoices):
    RECEIPT_CREATED = "receipt.created", "receipt.created"
    RECEIPT_CONTACT_UPDATED = "receipt.contact_updated", "receipt.contact_updated"
    RECEIPT_REFUNDED = "receipt.refunded", "receipt.refunded"
    RECEIPT_VOIDED = "receipt.voided", "receipt.voided"
    DELIVERY_FAILED = "delivery.failed", "delivery.failed"


class Endpoint(models.Model):
    """A URL of a merchant's own systems that receives its events, signed with ``secret``."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField("URL", max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    # Event types sent to it; empty: every type.
    event_types = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    # Why it was disabled by the service (kept failing), shown to its owners.
    disabled_reason = models.CharField(max_length=200, blank=True)
    # The signing secret (whsec_...). Stored as given, since the service signs with it.
    secret = models.CharField(max_length=64)
    # The secret before the last roll, still signing until previous_secret_expires_at.
    previous_secret = models.CharField(max_length=64, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # Set at the first failed attempt after a success (or ever); cleared by a success.
    failing_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "webhook endpoint"
        indexes = [
            # webhooks.listeners: the endpoints of a merchant an event goes to.
            models.Index(fields=["merchant", "enabled"], name="webhook_endpoint_merchant"),
        ]

    def __str__(self) -> str:
        return self.url

    def signing_secrets(self, now=None) -> list[str]:
        """The secrets that sign a request now: the current one, and during a roll's grace the previous one."""
        now = now or timezone.now()
        secrets = [self.secret]
        if self.previous_secret and self.previous_secret_expires_at and self.previous_secret_expires_at > now:
            secrets.append(self.previous_secret)
        return secrets


# The outbox's references (an event's merchant and receipt, a delivery's event and
# endpoint) have no constraint in the database (db_constraint=False), only in Django, which
# still cascades (or sets null) when one is deleted. They are made by one statement that
# writes the sale, its event and its deliveries together (webhooks.outbox), so they point
# at real rows by construction; a constraint would only check them again on every sale,
# and on PostgreSQL two of the checks share-lock the merchant's and the endpoint's rows,
# which every concurrent sale of that merchant locks too. With them (and two indexes
# since dropped) a sale with an endpoint ran at 0.77 of the rate of one without
# (bench/run.py), without them at 0.91. A delivery whose endpoint was deleted in the
# middle of its sale is dropped by the sender (webhooks.sending).


class Event(models.Model):
    """Something that happened to a merchant's receipt, as the body sent for it."""

    public_id = models.CharField("id", max_length=40)  # evt_..., unique (Meta)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="webhook_events", db_constraint=False)
    receipt = models.ForeignKey(
        Receipt, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    type = models.CharField(max_length=40, choices=EventType.choices)
    livemode = models.BooleanField()
    # The JSON body exactly as sent (and signed): every retry sends the same bytes.
    body = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "webhook event"
        # A constraint rather than unique=True, which on PostgreSQL adds a second index for
        # LIKE look-ups that nothing makes: one index less to write per event.
        constraints = [models.UniqueConstraint(fields=["public_id"], name="webhook_event_public_id")]

    def __str__(self) -> str:
        return f"{self.type} {self.public_id}"


class DeliveryQuerySet(models.QuerySet):
    def due(self, now, stale_before) -> DeliveryQuerySet:
        """Deliveries a sweep should (re)queue: retries whose time has come, and pending or
        sending ones untouched since ``stale_before`` (their task was lost or its worker died)."""
        return self.filter(
            models.Q(status=Delivery.Status.RETRYING, next_attempt_at__lte=now)
            | models.Q(status__in=[Delivery.Status.PENDING, Delivery.Status.SENDING], updated_at__lt=stale_before)
        )


class Delivery(models.Model):
    """One event to one endpoint, tried until it succeeds or its time is up."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        RETRYING = "retrying", "Failed, will retry"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries", db_constraint=False)
    # No index of its own: webhook_delivery_endpoint (Meta) begins with it.
    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, related_name="deliveries", db_constraint=False, db_index=False
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField("last answer", null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # The sweep (DeliveryQuerySet.due) over unfinished deliveries.
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_status_next"),
            # An endpoint's deliveries in the admin.
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint"),
        ]

    def __str__(self) -> str:
        return f"{self.event.type} to {self.endpoint.url}"


class Attempt(models.Model):
    """One request of a delivery and what came of it."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_set")
    succeeded = models.BooleanField()
    status_code = models.PositiveSmallIntegerField("answer", null=True, blank=True)
    duration_ms = models.PositiveIntegerField("duration (ms)")
    error = models.CharField(max_length=300, blank=True)
    next_attempt_at = models.DateTimeField("next try", null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "webhook attempt"
        indexes = [models.Index(fields=["delivery", "-created_at"], name="webhook_attempt_delivery")]

    def __str__(self) -> str:
        return f"attempt {self.pk} of {self.delivery_id}"
