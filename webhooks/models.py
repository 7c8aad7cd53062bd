"""Webhook endpoints, the events recorded for them, and each delivery and attempt.

An Event is written with the change it reports, in its transaction or statement, with a
delivery to each endpoint that wants it in the one outbox (webhooks.events,
messaging.outbox); the outbox sends them through the webhook transport
(webhooks.transport), which records every try as an Attempt.
"""

from __future__ import annotations

from functools import cached_property

from django.db import models
from django.utils import timezone

from merchants.models import Merchant
from messaging.models import Delivery as OutboxDelivery
from receipts.models import Receipt

# The outbox's channel of webhook deliveries (messaging.transports).
WEBHOOK = "webhook"


class EventType(models.TextChoices):
    RECEIPT_CREATED = "receipt.created", "receipt.created"
    RECEIPT_CONTACT_UPDATED = "receipt.contact_updated", "receipt.contact_updated"
    RECEIPT_REFUNDED = "receipt.refunded", "receipt.refunded"
    RECEIPT_VOIDED = "receipt.voided", "receipt.voided"
    DELIVERY_FAILED = "delivery.failed", "delivery.failed"
    # A receipt's report to the tax authority (einvoicing): accepted, or failed for good.
    RECEIPT_REPORTED = "receipt.reported", "receipt.reported"
    RECEIPT_REPORT_FAILED = "receipt.report_failed", "receipt.report_failed"


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
    # Set on the endpoints ``listenwebhooks`` makes (a listener's), which it pushes back
    # while it runs: past it nothing is sent there, and the outbox's sweep removes the
    # endpoint, so that a listener killed outright leaves nothing live (webhooks.endpoints).
    expires_at = models.DateTimeField(null=True, blank=True, editable=False)
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

    def expired(self, now=None) -> bool:
        """Whether this is a listener's endpoint whose time is up."""
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    def signing_secrets(self, now=None) -> list[str]:
        """The secrets that sign a request now: the current one, and during a roll's grace the previous one."""
        now = now or timezone.now()
        secrets = [self.secret]
        if self.previous_secret and self.previous_secret_expires_at and self.previous_secret_expires_at > now:
            secrets.append(self.previous_secret)
        return secrets


# An event's references (its merchant and receipt) have no constraint in the database
# (db_constraint=False), only in Django, which still cascades (or sets null) when one is
# deleted; a delivery names its endpoint and event by id (WebhookDelivery). They are made
# by one statement that writes the sale, its event and its deliveries together
# (webhooks.events), so they point at real rows by construction; a constraint would only
# check them again on every sale, and on PostgreSQL the checks share-lock the merchant's
# and the endpoint's rows, which every concurrent sale of that merchant locks too. With
# them (and two indexes since dropped) a sale with an endpoint ran at 0.77 of the rate of
# one without (bench/run.py), without them at 0.91. A delivery whose endpoint was deleted
# in the middle of its sale is dropped by the transport (webhooks.transport).


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
    def to_endpoint(self, endpoint: Endpoint | int) -> DeliveryQuerySet:
        return self.filter(destination=str(getattr(endpoint, "pk", endpoint)))

    def of_event(self, event: Event | int) -> DeliveryQuerySet:
        return self.filter(payload_id=getattr(event, "pk", event))


class DeliveryManager(models.Manager.from_queryset(DeliveryQuerySet)):
    def get_queryset(self) -> DeliveryQuerySet:
        return super().get_queryset().filter(channel=WEBHOOK)


class Delivery(OutboxDelivery):
    """One event to one endpoint, tried until it succeeds or its time is up: a delivery of
    the one outbox (messaging.Delivery) on the webhook channel, its destination the
    endpoint's id and its payload the event's."""

    objects = DeliveryManager()

    class Meta:
        proxy = True
        ordering = ["-created_at"]
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        event, endpoint = self.event, self.endpoint
        return f"{event.type if event else 'event'} to {endpoint.url if endpoint else 'a deleted endpoint'}"

    @property
    def endpoint_id(self) -> int:
        return int(self.destination)

    @cached_property
    def endpoint(self) -> Endpoint | None:
        return Endpoint.objects.select_related("merchant").filter(pk=self.endpoint_id).first()

    @cached_property
    def event(self) -> Event | None:
        return Event.objects.filter(pk=self.payload_id).first()


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
