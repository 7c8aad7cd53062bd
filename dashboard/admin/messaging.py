"""Receipts sent to customers, in the merchant dashboard: the outbox's email, SMS and
WhatsApp deliveries (webhook deliveries have their page in dashboard.admin.webhooks), read-only,
scoped to the staff user's merchants, destinations shown masked only, each with what its
provider last reported of it (messaging.reports): delivered, read, or not, and why."""

from django.contrib import admin, messages

from dashboard.scoping import MerchantScopedAdmin, merchant_ids
from merchants.zones import dashboard_time
from messaging import outbox
from messaging.models import CHANNEL_LABELS, Delivery


class ChannelFilter(admin.SimpleListFilter):
    """The deliveries by channel, in words (Text message, not sms)."""

    title = "channel"
    parameter_name = "channel"

    def lookups(self, request, model_admin):
        return list(CHANNEL_LABELS.items())

    def queryset(self, request, queryset):
        return queryset.filter(channel=self.value()) if self.value() else queryset


@admin.register(Delivery)
class DeliveryAdmin(MerchantScopedAdmin):
    """Read-only: deliveries are made by the service."""

    list_title = "Receipts sent to customers"

    list_display = [
        "created",
        "receipt_code",
        "channel_words",
        "masked_destination",
        "status",
        "provider_report",
        "sent",
    ]
    list_filter = ["status", "report", ChannelFilter, "created_at"]
    search_fields = ["=receipt__short_code", "=receipt__token"]
    list_select_related = ["receipt__merchant"]
    show_full_result_count = False
    fields = [
        "receipt",
        "channel_words",
        "masked_destination",
        "status",
        "attempts",
        "last_error",
        "next_attempt",
        "sent",
        "provider_report",
        "reported",
        "created",
        "updated",
    ]
    readonly_fields = fields
    actions = ["retry_now"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(receipt__isnull=False)  # a receipt to its customer

    def merchant_id_of(self, delivery) -> int | None:
        return delivery.merchant_id

    @admin.display(description="sent by", ordering="channel")
    def channel_words(self, delivery):
        return delivery.channel_label

    @admin.display(description="asked for", ordering="created_at")
    def created(self, delivery: Delivery) -> str:
        return dashboard_time(delivery.created_at, delivery.receipt.merchant.time_zone)

    @admin.display(description="sent", ordering="sent_at")
    def sent(self, delivery: Delivery) -> str:
        return dashboard_time(delivery.sent_at, delivery.receipt.merchant.time_zone)

    @admin.display(description="next attempt")
    def next_attempt(self, delivery: Delivery) -> str:
        return dashboard_time(delivery.next_attempt_at, delivery.receipt.merchant.time_zone)

    @admin.display(description="provider's report", ordering="report")
    def provider_report(self, delivery: Delivery) -> str:
        return delivery.report_words or "—"

    @admin.display(description="reported", ordering="reported_at")
    def reported(self, delivery: Delivery) -> str:
        return dashboard_time(delivery.reported_at, delivery.receipt.merchant.time_zone)

    @admin.display(description="updated")
    def updated(self, delivery: Delivery) -> str:
        return dashboard_time(delivery.updated_at, delivery.receipt.merchant.time_zone)

    @admin.display(description="receipt", ordering="receipt__short_code")
    def receipt_code(self, delivery: Delivery) -> str:
        return delivery.receipt.short_code

    @admin.display(description="destination")
    def masked_destination(self, delivery: Delivery) -> str:
        return delivery.masked_destination

    def has_add_permission(self, request):
        return False  # made by the service when a contact is attached

    def has_change_permission(self, request, obj=None):
        return False

    def has_act_permission(self, request) -> bool:
        """Sending again is the shop's owners' (members look): the bulk "Action" select, and
        the list's checkboxes, are shown only to those who have it."""
        return merchant_ids(request, owner=True) != []

    @admin.action(description="Try the selected failed deliveries again now", permissions=["act"])
    def retry_now(self, request, queryset):
        count = outbox.retry_now(queryset)
        self.message_user(request, f"{count} deliveries queued again.", messages.SUCCESS)
