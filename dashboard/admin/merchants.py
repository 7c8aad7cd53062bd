"""The merchant dashboard: merchants, API keys, usage and memberships in the Django admin.

Every page is scoped by dashboard.scoping: staff see their own merchants' rows only.
Full API keys appear exactly once, on the page the response that made them leads to
(dashboard.shown_once), and are never stored, logged or put in a message, nor in a
session unmasked.
"""

from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from dashboard import charts, shown_once, team
from dashboard.merchant_form import MerchantForm
from dashboard.plain_words import tax_id_type
from dashboard.scoping import MerchantScopedAdmin, allowed, merchant_ids
from dashboard.usage import daily_costs
from merchants.keys import PREFIX_RE, KeyStateError, revoke_key, rotate_key, save_new_key
from merchants.models import ApiKey, Invitation, Merchant, MerchantMembership
from merchants.usage import usage_report
from merchants.zones import dashboard_time, zone_name
from receipts import daily

KEY_SHOWN_ONCE = (
    "A key is shown once, on the page that made it: this one cannot be shown again. "
    "Lost it? Rotate the key to get a new one."
)
GRACE_CHOICES = [
    ("0", "None: the old key stops now"),
    ("3600", "1 hour"),
    ("86400", "24 hours"),
    ("604800", "7 days"),
]


@admin.register(Merchant)
class MerchantAdmin(MerchantScopedAdmin):
    list_title = "Merchants"
    change_title = "Shop details"
    merchant_path = "pk"
    owners_may_change = True
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    form = MerchantForm  # the fields' plain words (dashboard.merchant_form)
    list_display = ["shop_name", "shop_id", "status", "require_api_key", "created", "dashboard_links"]
    search_fields = ["name", "=string_id"]
    actions = ["suspend", "reactivate"]
    # What an owner may edit; the rest is the operator's.
    owner_fields = [
        "name", "logo_url", "accent_color", "legal_name", "address", "phone", "support_email", "tax_id_scheme",
        "tax_id", "registration_number", "country", "time_zone", "return_policy", "receipt_footer", "require_api_key",
        "receipt_prefix",
    ]  # fmt: skip
    fieldsets = [
        (None, {"fields": ["string_id", "status", "is_test"]}),
        ("On its receipts", {"fields": ["name", "logo_url", "accent_color"]}),
        (
            "Legal identity",
            {
                "fields": [
                    "legal_name",
                    "address",
                    "phone",
                    "support_email",
                    ("tax_id_scheme", "tax_id"),
                    "registration_number",
                    "country",
                    "time_zone",
                ],  # fmt: skip
                "description": "As a tax receipt states it: shown on every receipt page, email, printed copy and "
                "downloaded document.",
            },
        ),
        (
            "Identity checked by Receco",
            {
                "fields": ["checked_legal_name", "checked_registration_number"],
                "description": "Only Receco's operator sets these, after checking the company registry. The verify "
                "page calls this identity verified, and every receipt logged from then on signs it; the name on "
                "receipts and the legal identity above are the shop's own words.",
            },
        ),
        ("At the foot of every receipt", {"fields": ["return_policy", "receipt_footer"]}),
        (
            "Receipt numbers",
            {
                "fields": ["receipt_prefix"],
                "description": "Every receipt takes the next number of its series: MP-2026-000123, or "
                "MP-TILL3-2026-000045 for a sale that names its till. Test receipts are numbered apart (TEST-…).",
            },
        ),
        ("API", {"fields": ["require_api_key"]}),
        ("Record", {"fields": ["created", "updated"]}),
    ]

    def merchant_id_of(self, obj):
        return obj.pk

    @admin.display(description="name", ordering="name")
    def shop_name(self, merchant):
        if merchant.is_test:  # a test- merchant, made by a till's test sale: marked, never taken for a shop
            return format_html('{} <span class="badge-test">Test</span>', merchant.name)
        return merchant.name

    @admin.display(description="shop id", ordering="string_id")
    def shop_id(self, merchant):
        return merchant.string_id

    @admin.display(description="Tax ID type")
    def tax_id_type(self, merchant):
        return tax_id_type(merchant.tax_id_scheme)

    def get_fieldsets(self, request, obj=None):
        if self.has_change_permission(request, obj):
            return self.fieldsets
        # Read only: the tax ID's type in words, not its code.
        return [
            (name, {**options, "fields": [_read_only(field) for field in options["fields"]]})
            for name, options in self.fieldsets
        ]

    def get_list_filter(self, request):
        return ["status", "is_test"] if request.user.is_superuser else []

    def get_readonly_fields(self, request, obj=None):
        if request.user.is_superuser:
            return ["created", "updated"]
        fields = [field.name for field in Merchant._meta.fields if field.name not in ("id", *self.owner_fields)]
        return [*fields, "created", "updated"]

    @admin.display(description="created", ordering="created_at")
    def created(self, merchant):
        return dashboard_time(merchant.created_at, merchant.time_zone)

    @admin.display(description="updated")
    def updated(self, merchant):
        return dashboard_time(merchant.updated_at, merchant.time_zone)

    def get_actions(self, request):
        # Suspension is the operator's decision, never a merchant's own.
        return super().get_actions(request) if request.user.is_superuser else {}

    @admin.display(description="Dashboard")
    def dashboard_links(self, merchant):
        keys = reverse("admin:merchants_apikey_changelist") + f"?merchant={merchant.pk}"
        receipts = reverse("admin:receipts_receipt_changelist") + f"?merchant={merchant.pk}"
        usage = reverse("admin:merchants_merchant_usage", args=[merchant.pk])
        webhooks = reverse("admin:webhooks_endpoint_changelist") + f"?merchant={merchant.pk}"
        return format_html(
            '<a href="{}">Keys</a> · <a href="{}">Receipts</a> · <a href="{}">Usage</a> · <a href="{}">Webhooks</a>',
            keys,
            receipts,
            usage,
            webhooks,
        )

    @admin.action(description="Suspend the selected merchants (their keys stop working)")
    def suspend(self, request, queryset):
        changed = sum(merchant.set_suspended(True) for merchant in queryset)
        self.message_user(request, f"Suspended {changed} merchant(s).", messages.WARNING)

    @admin.action(description="Reactivate the selected merchants")
    def reactivate(self, request, queryset):
        changed = sum(merchant.set_suspended(False) for merchant in queryset)
        self.message_user(request, f"Reactivated {changed} merchant(s).", messages.SUCCESS)

    def get_urls(self):
        usage = self.admin_site.admin_view(self.usage_view)
        return [path("<int:object_id>/usage/", usage, name="merchants_merchant_usage"), *super().get_urls()]

    def usage_view(self, request, object_id):
        merchant = get_object_or_404(self.get_queryset(request), pk=object_id)
        if not self.has_view_permission(request, merchant):
            raise PermissionDenied
        now = timezone.now()
        report = usage_report(merchant, days=30, now=now)
        sales = daily.recent_sales(merchant, 30, now)  # as Today counts them
        labels = [
            f"{series.api_key.name or series.api_key.get_type_display()} ({series.api_key.prefix})"
            for series in report.keys
        ]
        sales_series = [("Live sales", [count.live for count in sales.values()])]
        if any(count.test for count in sales.values()):
            sales_series.append(("Test sales", [count.test for count in sales.values()]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": merchant,
            "title": f"Usage of {merchant.name}",
            "report": report,
            "calls_chart": charts.stacked_bars(
                report.days, list(zip(labels, [s.counts for s in report.keys], strict=True))
            ),
            "receipts_chart": charts.stacked_bars(list(sales), sales_series),
            "call_rows": list(zip(report.days, report.calls, strict=True))[::-1],
            "sales_rows": list(sales.items())[::-1],
            "sales_meaning": daily.MEANING,
            "zone": zone_name(merchant.time_zone, now),
            "key_rows": [
                (label, series, dashboard_time(series.api_key.last_used_at, merchant.time_zone))
                for label, series in zip(labels, report.keys, strict=True)
            ],
            # What its receipts cost to send, as the providers bill them (dashboard.usage).
            "message_rows": [
                cost for cost in daily_costs(merchant.pk, 30, now) if cost.sms_parts or cost.whatsapp_messages
            ][::-1],
        }
        return TemplateResponse(request, "admin/merchants/merchant/usage.html", context)


def _read_only(field):
    if field == ("tax_id_scheme", "tax_id"):
        return ("tax_id_type", "tax_id")
    return field


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return ApiKey.State.choices

    def queryset(self, request, queryset):
        now = timezone.now()
        conditions = {
            ApiKey.State.ACTIVE: Q(revoked_at__isnull=True, expires_at__isnull=True),
            ApiKey.State.EXPIRING: Q(revoked_at__isnull=True, expires_at__gt=now),
            ApiKey.State.EXPIRED: Q(revoked_at__isnull=True, expires_at__lte=now),
            ApiKey.State.REVOKED: Q(revoked_at__isnull=False),
        }
        condition = conditions.get(self.value())
        return queryset if condition is None else queryset.filter(condition)


class RotationDueFilter(admin.SimpleListFilter):
    title = "rotation"
    parameter_name = "rotation"

    def lookups(self, request, model_admin):
        return [("due", f"Due (active, older than {ApiKey.ROTATION_PERIOD.days} days)")]

    def queryset(self, request, queryset):
        if self.value() != "due":
            return queryset
        cutoff = timezone.now() - ApiKey.ROTATION_PERIOD
        return queryset.filter(revoked_at__isnull=True, expires_at__isnull=True, created_at__lte=cutoff)


class ApiKeyCreationForm(forms.ModelForm):
    type = forms.ChoiceField(
        label="Test or live?",
        widget=forms.RadioSelect,
        choices=[
            (ApiKey.Type.TEST, "Test: for setting up and trying a till; its receipts are never sent to customers."),
            (ApiKey.Type.LIVE, "Live: for real sales; customers get the receipts it makes."),
        ],
        initial=ApiKey.Type.TEST,
    )

    class Meta:
        model = ApiKey
        fields = ["merchant", "type", "name"]
        labels = {"merchant": "Shop"}
        help_texts = {"name": "Where it is used, e.g. “Till 1” or “Online shop”: it names the key in these pages."}


@admin.register(ApiKey)
class ApiKeyAdmin(MerchantScopedAdmin):
    list_title = "API keys"
    owners_may_add = True
    owners_may_change = True
    list_display = ["label", "merchant", "type", "state_label", "last_used", "expires"]
    list_filter = ["type", StateFilter, RotationDueFilter]
    list_select_related = ["merchant"]
    search_fields = ["name"]
    readonly_fields = ["merchant", "type", "prefix", "state_label", "created", "last_used", "expires", "revoked"]
    readonly_fields += ["rotated_to_link"]
    fields = ["name", *readonly_fields]

    def get_list_display(self, request):
        ids = merchant_ids(request)
        if ids is not None and len(ids) == 1:  # one merchant: the column would say the same on every row
            return [column for column in self.list_display if column != "merchant"]
        return self.list_display

    @admin.display(description="name", ordering="name")
    def label(self, api_key):
        name = api_key.name or f"{api_key.get_type_display()} key"
        return format_html('{}<br><code class="key-prefix">{}…</code>', name, api_key.prefix)

    @admin.display(description="last used", ordering="last_used_at")
    def last_used(self, api_key):
        return dashboard_time(api_key.last_used_at, api_key.merchant.time_zone) if api_key.last_used_at else "Never"

    @admin.display(description="expires", ordering="expires_at")
    def expires(self, api_key):
        return dashboard_time(api_key.expires_at, api_key.merchant.time_zone) if api_key.expires_at else "Never"

    @admin.display(description="created")
    def created(self, api_key):
        return dashboard_time(api_key.created_at, api_key.merchant.time_zone)

    @admin.display(description="revoked")
    def revoked(self, api_key):
        return dashboard_time(api_key.revoked_at, api_key.merchant.time_zone)

    def add_view(self, request, form_url="", extra_context=None):
        context = {"title": "Create a key", "show_save_and_add_another": False, "show_save_and_continue": False}
        context["save_label"] = "Create the key"  # templates/admin/submit_line.html
        return super().add_view(request, form_url, {**context, **(extra_context or {})})

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ApiKeyCreationForm
            kwargs["fields"] = ["merchant", "type", "name"]
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request, obj=None):
        return ["merchant", "type", "name"] if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_search_results(self, request, queryset, search_term):
        match = PREFIX_RE.match(search_term.strip())
        if match:  # a pasted prefix such as poslive_3kTq9ZxW1bNa
            return queryset.filter(lookup_id=match["lookup"], type=match["type"]), False
        return super().get_search_results(request, queryset, search_term)

    @admin.display(description="state")
    def state_label(self, api_key):
        state = ApiKey.State(api_key.state())
        label = state.label
        if state == ApiKey.State.EXPIRING:
            label = f"Expiring {dashboard_time(api_key.expires_at, api_key.merchant.time_zone)}"
        if api_key.rotation_due():
            return format_html('{} <strong style="color:#b45309">· rotation due</strong>', label)
        return label

    @admin.display(description="rotated to")
    def rotated_to_link(self, api_key):
        if api_key.rotated_to is None:
            return "—"
        url = reverse("admin:merchants_apikey_change", args=[api_key.rotated_to_id])
        return format_html('<a href="{}">{}</a>', url, api_key.rotated_to)

    def save_model(self, request, obj, form, change):
        if change:
            obj.save(update_fields=["name"])
            return
        if not allowed(merchant_ids(request, owner=True), obj.merchant_id):
            raise PermissionDenied
        # Kept on the instance for response_add only; never saved anywhere.
        obj.new_key = save_new_key(obj)

    def response_add(self, request, obj, post_url_continue=None):
        return self._show_key(request, obj, obj.new_key, "API key created")

    def _show_key(self, request, api_key, key, title, replaced=None):
        """Post, redirect, get: the page that shows the key once (shown_view), so that a
        reload makes no second key."""
        response = HttpResponseRedirect(reverse("admin:merchants_apikey_shown", args=[api_key.pk]))
        shown_once.hand_over(request, response, api_key.pk, key, title=title, replaced=replaced and replaced.pk)
        return response

    def shown_view(self, request, object_id):
        api_key = get_object_or_404(self.get_queryset(request).select_related("merchant"), pk=object_id)
        handed = shown_once.take(request, api_key.pk)
        if handed is None:  # shown already (a reload), or another browser's
            self.message_user(request, KEY_SHOWN_ONCE, messages.INFO)
            response = HttpResponseRedirect(reverse("admin:merchants_apikey_change", args=[api_key.pk]))
            shown_once.forget(response)
            return response
        key, shown = handed
        replaced = ApiKey.objects.filter(pk=shown["replaced"]).select_related("merchant").first()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": shown["title"],
            "api_key": api_key,
            "key": key,
            "replaced": replaced,
            "replaced_until": replaced and dashboard_time(replaced.expires_at, replaced.merchant.time_zone),
        }
        response = TemplateResponse(request, "admin/merchants/apikey/key_shown.html", context)
        response["Cache-Control"] = "no-store"
        shown_once.forget(response)
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = extra_context or {}
        api_key = self.get_object(request, object_id)
        if api_key is not None and self.has_change_permission(request, api_key):
            state = api_key.state()
            extra_context["can_rotate"] = state == ApiKey.State.ACTIVE
            extra_context["can_revoke"] = state != ApiKey.State.REVOKED
        return super().change_view(request, object_id, form_url, extra_context)

    def has_delete_permission(self, request, obj=None):
        # Keys are revoked, never deleted: their history stays (usage, audit log).
        return False

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:object_id>/rotate/", wrap(self.rotate_view), name="merchants_apikey_rotate"),
            path("<int:object_id>/revoke/", wrap(self.revoke_view), name="merchants_apikey_revoke"),
            path("<int:object_id>/shown/", wrap(self.shown_view), name="merchants_apikey_shown"),
            *super().get_urls(),
        ]

    def _key_to_manage(self, request, object_id) -> ApiKey:
        api_key = get_object_or_404(self.get_queryset(request).select_related("merchant"), pk=object_id)
        if not self.has_change_permission(request, api_key):
            raise PermissionDenied
        return api_key

    def _confirm(self, request, api_key, action, form=None):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": api_key,
            "title": f"{action.capitalize()} {api_key}?",
            "action": action,
            "form": form,
        }
        return TemplateResponse(request, "admin/merchants/apikey/confirm.html", context)

    def rotate_view(self, request, object_id):
        api_key = self._key_to_manage(request, object_id)
        form = RotateForm(request.POST or None)
        if request.method != "POST" or not form.is_valid():
            return self._confirm(request, api_key, "rotate", form)
        try:
            issued = rotate_key(api_key, timedelta(seconds=int(form.cleaned_data["grace"])))
        except KeyStateError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return HttpResponseRedirect(reverse("admin:merchants_apikey_change", args=[api_key.pk]))
        self.log_change(request, api_key, f"Rotated: replaced by {issued.api_key.prefix}, expires {api_key.expires_at}")
        self.log_addition(request, issued.api_key, f"Made by rotating {api_key.prefix}")
        return self._show_key(request, issued.api_key, issued.key, "API key rotated", replaced=api_key)

    def revoke_view(self, request, object_id):
        api_key = self._key_to_manage(request, object_id)
        if request.method != "POST":
            return self._confirm(request, api_key, "revoke")
        if revoke_key(api_key):
            self.log_change(request, api_key, "Revoked")
            self.message_user(request, f"Revoked {api_key}. It no longer works, for good.", messages.SUCCESS)
        else:
            self.message_user(request, f"{api_key} was already revoked.", messages.INFO)
        return HttpResponseRedirect(reverse("admin:merchants_apikey_change", args=[api_key.pk]))


class RotateForm(forms.Form):
    grace = forms.ChoiceField(
        label="The old key keeps working for",
        choices=GRACE_CHOICES,
        initial="86400",
        help_text="Time to put the new key into every POS before the old one stops.",
    )


class TeamRoleForm(forms.ModelForm):
    class Meta:
        model = MerchantMembership
        fields = ["role"]

    def clean_role(self):
        role = self.cleaned_data["role"]
        if self.instance.pk and self.instance.role == MerchantMembership.Role.OWNER and role != self.instance.role:
            try:
                team.check_an_owner_stays(self.instance)
            except team.TeamError as error:
                raise forms.ValidationError(str(error)) from None
        return role


@admin.register(MerchantMembership)
class MerchantMembershipAdmin(MerchantScopedAdmin):
    """A shop's team: owners change roles and remove members (dashboard.team) and invite new
    ones (InvitationAdmin); members see who is in it. The operator may do anything."""

    list_title = "Team"
    owners_may_change = True
    list_display = ["user", "email", "merchant", "role", "joined"]
    list_filter = ["role"]
    list_select_related = ["user", "merchant"]
    search_fields = ["user__username", "user__email", "merchant__string_id", "merchant__name"]
    autocomplete_fields = ["merchant"]
    raw_id_fields = ["user"]

    def get_list_display(self, request):
        ids = merchant_ids(request)
        if ids is not None and len(ids) == 1:  # one shop: the column would say the same on every row
            return [column for column in self.list_display if column not in ("merchant", "joined")]
        return self.list_display

    @admin.display(description="joined", ordering="created_at")
    def joined(self, membership):
        return dashboard_time(membership.created_at, membership.merchant.time_zone)

    @admin.display(description="email", ordering="user__email")
    def email(self, membership):
        return membership.user.email or "—"

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None and not request.user.is_superuser:
            kwargs["form"] = TeamRoleForm
            kwargs["fields"] = ["role"]
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is not None and not request.user.is_superuser:
            return ["user", "email", "merchant", "role"]
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and not request.user.is_superuser:
            return ["user", "email", "merchant"]
        return []

    def get_actions(self, request):
        return super().get_actions(request) if request.user.is_superuser else {}

    def has_delete_permission(self, request, obj=None):
        if request.user.is_superuser:
            return True
        return self._owner_may(request, obj)

    def save_model(self, request, obj, form, change):
        if change and "role" in form.changed_data and not request.user.is_superuser:
            team.change_role(obj, form.cleaned_data["role"])
            return
        super().save_model(request, obj, form, change)

    def delete_view(self, request, object_id, extra_context=None):
        membership = self.get_object(request, object_id)
        if request.method == "POST" and membership is not None and self.has_delete_permission(request, membership):
            try:
                if membership.role == MerchantMembership.Role.OWNER:
                    team.check_an_owner_stays(membership)
            except team.TeamError as error:
                self.message_user(request, str(error), messages.ERROR)
                return HttpResponseRedirect(reverse("admin:merchants_merchantmembership_changelist"))
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request, obj):
        team.remove(obj)

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            team.remove(membership)


class InvitationForm(forms.ModelForm):
    class Meta:
        model = Invitation
        fields = ["merchant", "email", "role"]
        labels = {"merchant": "Shop"}
        help_texts = {"email": "We email a link that makes their account: it works once, within 72 hours."}

    def clean(self):
        cleaned = super().clean()
        merchant, email = cleaned.get("merchant"), cleaned.get("email")
        if (
            merchant
            and email
            and MerchantMembership.objects.filter(merchant=merchant, user__email__iexact=email).exists()
        ):
            raise forms.ValidationError(team.ALREADY_MEMBER.format(email=email))
        return cleaned


@admin.register(Invitation)
class InvitationAdmin(MerchantScopedAdmin):
    """Invitations to a shop's team: owners send them and cancel those not yet used."""

    list_title = "Invitations"
    owners_may_add = True
    form = InvitationForm
    list_display = ["email", "merchant", "role", "state", "sent"]
    list_select_related = ["merchant"]
    fields = ["merchant", "email", "role"]

    def get_list_display(self, request):
        ids = merchant_ids(request)
        if ids is not None and len(ids) == 1:
            return [column for column in self.list_display if column != "merchant"]
        return self.list_display

    @admin.display(description="state")
    def state(self, invitation):
        if invitation.accepted_at:
            return "Accepted"
        return "Waiting" if invitation.usable() else "Expired"

    @admin.display(description="sent", ordering="created_at")
    def sent(self, invitation):
        return dashboard_time(invitation.created_at, invitation.merchant.time_zone)

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["merchant", "email", "role", "state", "sent"]

    def get_fields(self, request, obj=None):
        return self.fields if obj is None else ["merchant", "email", "role", "state", "sent"]

    def add_view(self, request, form_url="", extra_context=None):
        context = {"title": "Invite someone to your team", "show_save_and_add_another": False}
        context["save_label"] = "Send invitation"  # templates/admin/submit_line.html
        return super().add_view(
            request, form_url, {**context, "show_save_and_continue": False, **(extra_context or {})}
        )

    def save_model(self, request, obj, form, change):
        if change:
            raise PermissionDenied
        if not allowed(merchant_ids(request, owner=True), obj.merchant_id):
            raise PermissionDenied
        invitation, token = team.invite(obj.merchant, obj.email, obj.role, request.user)
        team.send_invitation(invitation, request.build_absolute_uri(reverse("admin:join", args=[token])))
        obj.pk = invitation.pk
        obj.__dict__.update(invitation.__dict__)

    def response_add(self, request, obj, post_url_continue=None):
        self.message_user(request, f"Invitation sent to {obj.email}.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:merchants_invitation_changelist"))

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        if request.user.is_superuser:
            return True
        return self._owner_may(request, obj)
