"""Webhooks in the merchant dashboard: endpoints (added, edited, their secret rolled by
owners), deliveries (resent by owners) and every attempt, scoped to the user's merchants
like API keys (dashboard.scoping). A signing secret is shown once: in the response that
made it."""

from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Cast
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from dashboard.scoping import MerchantScopedAdmin, allowed, merchant_ids
from merchants.zones import dashboard_time
from messaging.outbox import resend
from webhooks.addresses import validate_url
from webhooks.endpoints import roll_secret, validate_event_types
from webhooks.models import Attempt, Delivery, Endpoint, Event, EventType
from webhooks.signing import new_secret

GRACE_CHOICES = [
    ("0", "None: the old secret stops now"),
    ("3600", "1 hour"),
    ("86400", "24 hours"),
    ("604800", "7 days"),
]


class EndpointForm(forms.ModelForm):
    url = forms.URLField(label="URL", max_length=2000, assume_scheme="https")
    event_types = forms.MultipleChoiceField(
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="None ticked: every event type, including types added later.",
    )

    class Meta:
        model = Endpoint
        fields = ["merchant", "url", "description", "event_types", "enabled"]

    def clean_url(self):
        url = self.cleaned_data["url"]
        validate_url(url)
        return url

    def clean_event_types(self):
        try:
            return validate_event_types(self.cleaned_data["event_types"])
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from None


class RollForm(forms.Form):
    grace = forms.ChoiceField(
        choices=GRACE_CHOICES,
        initial="86400",
        label="The old secret keeps signing for",
        help_text="Both secrets sign every request meanwhile (one v1= each): receivers switch without a gap.",
    )


class _MerchantTimes:
    """Times as the merchant reads them, in its own time zone and named (merchants.zones)."""

    def zone_of(self, obj) -> str:
        raise NotImplementedError

    @admin.display(description="created", ordering="created_at")
    def created(self, obj):
        return dashboard_time(obj.created_at, self.zone_of(obj))

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, obj):
        return dashboard_time(obj.updated_at, self.zone_of(obj))

    @admin.display(description="next try", ordering="next_attempt_at")
    def next_try(self, obj):
        return dashboard_time(obj.next_attempt_at, self.zone_of(obj))


class _Took:
    """How long an attempt took, with its unit, as a shop owner reads it ("120 ms")."""

    @admin.display(description="took", ordering="duration_ms")
    def took(self, attempt):
        return f"{attempt.duration_ms:,} ms"


@admin.register(Endpoint)
class EndpointAdmin(_MerchantTimes, MerchantScopedAdmin):
    owners_may_add = True
    owners_may_change = True
    form = EndpointForm
    list_display = ["url", "merchant", "description", "events_label", "enabled", "created"]
    list_filter = ["enabled"]
    list_title = "Webhook endpoints"
    list_select_related = ["merchant"]
    search_fields = ["url", "description"]
    readonly_fields = ["disabled_reason", "secret_label", "created", "updated", "deliveries_link"]

    def zone_of(self, endpoint):
        return endpoint.merchant.time_zone

    def get_list_display(self, request):
        ids = merchant_ids(request)
        if ids is not None and len(ids) == 1:  # one shop: the column would say the same on every row
            return [column for column in self.list_display if column != "merchant"]
        return self.list_display

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["merchant", "url", "description", "event_types", "enabled"]
        return ["url", "description", "event_types", "enabled", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser or self._owner_may(request, obj)

    @admin.display(description="events")
    def events_label(self, endpoint):
        return ", ".join(endpoint.event_types) or "all"

    @admin.display(description="signing secret")
    def secret_label(self, endpoint):
        note = "shown once when made or rolled"
        if len(endpoint.signing_secrets()) > 1:
            until = dashboard_time(endpoint.previous_secret_expires_at, endpoint.merchant.time_zone)
            note += f"; the previous one signs too until {until}"
        url = reverse("admin:webhooks_endpoint_roll", args=[endpoint.pk])
        return format_html('whsec_… ({}) · <a href="{}">Roll secret</a>', note, url)

    @admin.display(description="deliveries")
    def deliveries_link(self, endpoint):
        url = reverse("admin:webhooks_delivery_changelist") + f"?endpoint__id__exact={endpoint.pk}"
        return format_html('<a href="{}">Deliveries to this endpoint</a>', url)

    def save_model(self, request, obj, form, change):
        if not allowed(merchant_ids(request, owner=True), obj.merchant_id):
            raise PermissionDenied
        if not change:
            obj.secret = new_secret()
        elif "enabled" in form.changed_data and obj.enabled:
            obj.disabled_reason = ""
            obj.failing_since = None
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        return self._show_secret(request, obj, obj.secret, "Webhook endpoint added")

    def _show_secret(self, request, endpoint, secret, title):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            "endpoint": endpoint,
            "secret": secret,
        }
        response = TemplateResponse(request, "admin/webhooks/endpoint/secret_shown.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def get_urls(self):
        roll = self.admin_site.admin_view(self.roll_view)
        return [path("<int:object_id>/roll/", roll, name="webhooks_endpoint_roll"), *super().get_urls()]

    def roll_view(self, request, object_id):
        endpoint = get_object_or_404(self.get_queryset(request).select_related("merchant"), pk=object_id)
        if not self.has_change_permission(request, endpoint):
            raise PermissionDenied
        form = RollForm(request.POST or None)
        if request.method != "POST" or not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "original": endpoint,
                "title": f"Roll the secret of {endpoint}?",
                "form": form,
            }
            return TemplateResponse(request, "admin/webhooks/endpoint/roll.html", context)
        grace = timedelta(seconds=int(form.cleaned_data["grace"]))
        secret = roll_secret(endpoint, grace)
        self.log_change(request, endpoint, f"Secret rolled; the old one signs for {grace}")
        return self._show_secret(request, endpoint, secret, "Signing secret rolled")


class AttemptInline(_Took, _MerchantTimes, admin.TabularInline):
    model = Attempt
    template = "admin/webhooks/delivery/attempts.html"
    fields = ["created", "succeeded", "status_code", "took", "error", "next_try"]
    readonly_fields = fields

    def zone_of(self, attempt):
        return attempt.delivery.merchant.time_zone

    extra = 0
    can_delete = False

    def has_view_permission(self, request, obj=None):
        return True  # shown on a delivery's page, which DeliveryAdmin scopes

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class _EndpointFilter(admin.SimpleListFilter):
    """The user's own endpoints only."""

    title = "endpoint"
    parameter_name = "endpoint__id__exact"

    def lookups(self, request, model_admin):
        ids = merchant_ids(request)
        endpoints = Endpoint.objects.all() if ids is None else Endpoint.objects.filter(merchant_id__in=ids)
        return [(str(endpoint.pk), endpoint.url) for endpoint in endpoints[:100]]

    def queryset(self, request, queryset):
        if self.value() and self.value().isdigit():
            return queryset.to_endpoint(int(self.value()))
        return queryset


class _EventTypeFilter(admin.SimpleListFilter):
    title = "event type"
    parameter_name = "type"

    def lookups(self, request, model_admin):
        return EventType.choices

    def queryset(self, request, queryset):
        if self.value() in EventType.values:
            return queryset.filter(payload_id__in=Event.objects.filter(type=self.value()).values("pk"))
        return queryset


def _of_event(column: str) -> Subquery:
    return Subquery(Event.objects.filter(pk=OuterRef("payload_id")).values(column)[:1])


@admin.register(Delivery)
class DeliveryAdmin(_MerchantTimes, MerchantScopedAdmin):
    """The outbox's webhook deliveries (messaging.Delivery on the webhook channel): the
    event and endpoint of each, named by id, read with the list in one query."""

    # The event's id and the last answer's status code are on the delivery's page: the
    # list keeps what fits beside the filters at 1280 pixels.
    list_display = ["event_type", "endpoint_url", "status", "attempts", "next_try", "created"]
    list_title = "Webhook deliveries"
    list_filter = ["status", _EventTypeFilter, _EndpointFilter]
    list_select_related = ["merchant"]
    fields = ["event_id", "event_type", "endpoint_url", "status", "attempts", "last_status_code", "next_try"]
    fields += ["created", "body"]
    readonly_fields = fields
    inlines = [AttemptInline]
    actions = ["resend_deliveries"]
    search_fields = ["=payload_id"]  # searched by the event's public id: get_search_results
    search_help_text = "An event's id (evt_…)."

    def get_queryset(self, request):
        endpoint = Endpoint.objects.filter(pk=Cast(OuterRef("destination"), models.BigIntegerField()))
        return (
            super()
            .get_queryset(request)
            .annotate(
                event_public_id=_of_event("public_id"),
                event_type_name=_of_event("type"),
                endpoint_address=Subquery(endpoint.values("url")[:1]),
            )
        )

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(payload_id__in=Event.objects.filter(public_id=term).values("pk")), False

    def merchant_id_of(self, obj):
        return obj.merchant_id

    def zone_of(self, delivery):
        return delivery.merchant.time_zone

    def has_add_permission(self, request):
        return False  # made by events only

    def has_change_permission(self, request, obj=None):
        return False  # a record; resending makes a new one

    @admin.display(description="event", ordering="event_public_id")
    def event_id(self, delivery):
        return delivery.event_public_id or "—"

    @admin.display(description="type", ordering="event_type_name")
    def event_type(self, delivery):
        return delivery.event_type_name or "—"

    @admin.display(description="endpoint", ordering="endpoint_address")
    def endpoint_url(self, delivery):
        return delivery.endpoint_address or "(deleted)"

    @admin.display(description="body as sent")
    def body(self, delivery):
        event = delivery.event
        return format_html('<pre class="json-body" tabindex="0">{}</pre>', event.body if event else "")

    def get_actions(self, request):
        actions = super().get_actions(request)
        if merchant_ids(request, owner=True) == []:
            actions.pop("resend_deliveries", None)
        return actions

    @admin.action(description="Send the selected deliveries' events again")
    def resend_deliveries(self, request, queryset):
        owned = merchant_ids(request, owner=True)
        count = 0
        for delivery in queryset:
            if not allowed(owned, delivery.merchant_id):
                raise PermissionDenied
            resend(delivery)
            count += 1
        self.message_user(request, f"Queued {count} event(s) again, each as a new delivery.", messages.SUCCESS)


@admin.register(Attempt)
class AttemptAdmin(_Took, _MerchantTimes, MerchantScopedAdmin):
    merchant_path = "delivery__merchant"
    list_title = "Webhook attempts"
    list_display = ["created", "delivery_link", "succeeded", "status_code", "took", "next_try"]
    list_display += ["error"]
    list_filter = ["succeeded"]
    list_select_related = ["delivery__merchant"]
    fields = ["delivery_link", "created", "succeeded", "status_code", "took", "error", "next_try"]
    readonly_fields = fields

    def merchant_id_of(self, obj):
        return obj.delivery.merchant_id

    def zone_of(self, attempt):
        return attempt.delivery.merchant.time_zone

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="delivery")
    def delivery_link(self, attempt):
        url = reverse("admin:webhooks_delivery_change", args=[attempt.delivery_id])
        return format_html('<a href="{}">{}</a>', url, attempt.delivery)
