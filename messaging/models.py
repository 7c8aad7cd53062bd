"""The one outbox: every message the service sends out, whatever its channel, is a Delivery
(messaging.outbox sends them; messaging.transports says how each channel does).

A delivery names its channel, its merchant and where it goes (``destination``, in the
channel's terms: an email address, an E.164 number, a webhook endpoint's id), and what it
sends: a receipt (email, SMS), or a message stored when it was made (``payload_id``: a
webhook event). The apps above that make deliveries (webhooks) know what their ids mean;
this one does not.
"""

from django.db import models

from receipts.contacts import SMS_CHANNEL, WHATSAPP_CHANNEL, mask_destination

# The channels of receipts sent to customers (messaging.transports); apps above add
# their own (webhooks).
EMAIL = "email"
SMS = SMS_CHANNEL
WHATSAPP = WHATSAPP_CHANNEL
# The channels whose destination is a customer's address or number (personal data).
TO_CUSTOMERS = (EMAIL, SMS, WHATSAPP)
PHONE_CHANNELS = (SMS, WHATSAPP)
# The channels in words, as the dashboard and the receipt page name them.
CHANNEL_LABELS = {EMAIL: "Email", SMS: "Text message", WHATSAPP: "WhatsApp"}


class DeliveryQuerySet(models.QuerySet):
    def claimable(self, now) -> "DeliveryQuerySet":
        """Deliveries a sender may claim now: pending ones, and retries whose time has come."""
        return self.filter(
            models.Q(status=Delivery.Status.PENDING)
            | models.Q(status=Delivery.Status.RETRYING, next_attempt_at__lte=now)
        )


class OptIn(models.TextChoices):
    """Where a customer asked for the receipt on WhatsApp (its rules ask that this be kept)."""

    TILL = "till", "Asked at the till (the shop's POS, with its key)"
    RECEIPT_PAGE = "receipt_page", "Asked on the receipt's page or without the shop's key"


class Report(models.TextChoices):
    """A provider's delivery report, after it took the message; each later one a step on."""

    SENT = "sent", "Sent by the provider"
    DELIVERED = "delivered", "Delivered"
    READ = "read", "Read"
    FAILED = "failed", "Not delivered"


class Delivery(models.Model):
    """One message to one destination, tried until it is sent or its channel gives up.

    pending → sending (claimed by a sender) → sent (or sink, for a test receipt), or
    retrying (at ``next_attempt_at``) → sending …, or failed for good.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        RETRYING = "retrying", "Failed, will retry"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"
        # Test receipts: composed like a real delivery, handed to a sink, never to a customer.
        SINK = "sink", "Test receipt: sent to the sink"

    # The transport that sends it (messaging.transports): email, sms, webhook.
    channel = models.CharField(max_length=16)
    # Whose message it is. No constraint in the database, only in Django (which still
    # cascades): a sale's statement writes its deliveries, and a constraint would
    # share-lock the merchant's row that every concurrent sale of it locks too. None: the
    # service's own message to a customer, of no merchant (a sign-in code of the locker).
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.CASCADE, related_name="+", db_constraint=False, null=True, blank=True
    )
    # The receipt an email or a text message sends (None: the delivery carries a stored payload).
    receipt = models.ForeignKey(
        "receipts.Receipt", on_delete=models.CASCADE, null=True, blank=True, related_name="deliveries"
    )
    # Where it goes, in the channel's terms. An email address or a phone number is
    # personal data: shown and logged only masked (see masked_destination), and emptied
    # when the customer's contact is erased (messaging.erasure).
    destination = models.CharField(max_length=254)
    # What it sends when that was stored as it was made, in its channel's terms (a webhook event's id).
    payload_id = models.BigIntegerField(null=True, blank=True)
    # Asked for with the merchant's API key (a POS), rather than by anyone holding the
    # receipt's code: those have a far lower daily limit per destination (messaging.limits).
    keyed = models.BooleanField("asked for with the merchant's key", default=False, db_default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Attempts begun, counted when one is claimed: a message that kills its sender ends too.
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_status_code = models.PositiveSmallIntegerField("last answer", null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # The request that asked for it: the sender's log lines carry it (receco.ops.requestid).
    request_id = models.CharField(max_length=128, blank=True)
    # WhatsApp's rules: the customer's opt-in, recorded with the delivery it asked for (how;
    # when is ``created_at``). Empty for the channels that need none.
    opt_in = models.CharField("opt-in", max_length=16, choices=OptIn.choices, blank=True, default="", db_default="")
    # Who took it (the SMS provider, "whatsapp", the email provider) and the id it gave
    # the message, which its delivery reports name (messaging.reports). The id is erased
    # with the destination: the provider's own records hold the number by it.
    provider = models.CharField(max_length=32, blank=True, default="", db_default="")
    provider_message_id = models.CharField(max_length=128, blank=True, default="", db_default="")
    # What it costs: an SMS's parts, one per WhatsApp message, 0 for email (dashboard.usage).
    parts = models.PositiveSmallIntegerField(default=0, db_default=0)
    # What the provider last reported after it took the message (messaging.reports).
    report = models.CharField(max_length=16, choices=Report.choices, blank=True, default="", db_default="")
    report_reason = models.CharField(max_length=300, blank=True, default="", db_default="")
    reported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        indexes = [
            # Claims and the sweep (DeliveryQuerySet.claimable, messaging.outbox.sweep).
            models.Index(fields=["status", "next_attempt_at"], name="messaging_delivery_due"),
            # A receipt's deliveries: its page's list, its daily limit and duplicate check.
            models.Index(
                fields=["receipt", "-created_at"],
                name="messaging_delivery_receipt",
                condition=models.Q(receipt__isnull=False),
            ),
            # The daily limit per email address or number; a webhook endpoint's deliveries.
            models.Index(fields=["destination", "-created_at"], name="messaging_delivery_destination"),
            # A provider's delivery report names its message by the id it gave (messaging.reports).
            models.Index(
                fields=["provider", "provider_message_id"],
                name="messaging_delivery_provider_id",
                condition=~models.Q(provider_message_id=""),
            ),
            # The cost of a merchant's messages per day (dashboard.usage).
            models.Index(
                fields=["merchant", "sent_at"], name="messaging_delivery_cost", condition=models.Q(parts__gt=0)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel_label} to {self.masked_destination}"

    @property
    def channel_label(self) -> str:
        return CHANNEL_LABELS.get(self.channel, self.channel.capitalize())

    @property
    def masked_destination(self) -> str:
        """The destination as logs and pages may show it: a customer's address or number
        masked; another (a webhook endpoint's id) named with its channel: ``webhook 17``."""
        if self.channel in TO_CUSTOMERS:  # a customer's, with a receipt or without
            # An empty destination was a customer's, erased (messaging.erasure).
            return mask_destination(self.channel, self.destination) if self.destination else "(erased)"
        return f"{self.channel} {self.destination}"

    @property
    def status_for_customer(self) -> str:
        return {
            self.Status.PENDING: "sending",
            self.Status.SENDING: "sending",
            self.Status.RETRYING: "delayed, we keep trying",
            self.Status.SENT: "sent",
            self.Status.FAILED: "could not be delivered",
            self.Status.SINK: "not delivered (test receipt)",
        }[self.status]

    @property
    def report_words(self) -> str:
        """The provider's last delivery report in words, for the merchant: "Delivered",
        "Read", "Not delivered: <the provider's reason>"; empty before any report."""
        if not self.report:
            return ""
        words = self.get_report_display()
        return f"{words}: {self.report_reason}" if self.report == Report.FAILED and self.report_reason else words


class ChannelSettings(models.Model):
    """A merchant's own settings of its receipts' channels, set by the operator
    (``setchannels``): the sender id its texts carry where the provider allows one (it is
    registered with the provider first), and whether its customers may ask for WhatsApp.
    A merchant without a row uses the deployment's (RECECO_SMS_SENDER, WhatsApp on when
    configured)."""

    merchant = models.OneToOneField("merchants.Merchant", on_delete=models.CASCADE, related_name="channel_settings")
    # Alphanumeric sender ids are 3 to 11 letters, digits or spaces (GSM 03.38).
    sms_sender_id = models.CharField("SMS sender id", max_length=11, blank=True)
    whatsapp = models.BooleanField("offer WhatsApp", default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "channel settings"
        verbose_name_plural = "channel settings"

    def __str__(self) -> str:
        return f"channels of merchant {self.merchant_id}"
