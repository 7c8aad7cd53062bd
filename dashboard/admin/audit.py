"""The audit trail in the dashboard (merchants.audit): owners read their shops' entries,
the operator reads all; nobody adds, edits or deletes one here, the operator included."""

from datetime import UTC

from django.contrib import admin
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html, format_html_join

from dashboard.plain_words import FIELD_WORDS, tax_id_type
from dashboard.scoping import MerchantScopedAdmin, allowed, merchant_ids
from merchants.audit import SECRET, VERBS, headline
from merchants.models import ApiKey, AuditEntry
from merchants.zones import dashboard_time


class ActionFilter(admin.SimpleListFilter):
    """The trail's entries by what was done, in the trail's words (made, changed, removed)."""

    title = "what was done"
    parameter_name = "action"

    def lookups(self, request, model_admin):
        return [(str(action), VERBS[action].capitalize()) for action in VERBS if action != AuditEntry.Action.ACCESS]

    def queryset(self, request, queryset):
        return queryset.filter(action=int(self.value())) if (self.value() or "").isdigit() else queryset


# django-auditlog registers its own admin for the entry model; this one replaces it.
if admin.site.is_registered(AuditEntry):
    admin.site.unregister(AuditEntry)


@admin.register(AuditEntry)
class AuditEntryAdmin(MerchantScopedAdmin):
    list_title = "Audit trail"
    list_display = ["when", "who", "address", "what", "change_list"]
    list_select_related = ["merchant", "actor", "content_type"]
    list_filter = [ActionFilter]
    fields = ["when", "who", "address", "what", "change_list", "merchant"]
    readonly_fields = fields
    list_display_links = ["when"]

    def get_queryset(self, request):
        queryset = super(MerchantScopedAdmin, self).get_queryset(request)
        ids = merchant_ids(request, owner=True)
        return queryset if ids is None else queryset.filter(merchant__in=ids)

    def has_module_permission(self, request):
        return merchant_ids(request, owner=True) != []

    def has_view_permission(self, request, obj=None):
        ids = merchant_ids(request, owner=True)
        if obj is None:
            return ids != []
        return ids != [] and allowed(ids, obj.merchant_id)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        return {}

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The entry's page heads it as its list row says it, not as django-auditlog's str
        # ("Created sale QXD6NT" for a void); the breadcrumbs follow (admin/change_form.html).
        entry = self.get_object(request, object_id)
        named = {"subtitle": headline(entry)} if entry is not None else {}
        return super().change_view(request, object_id, form_url, {**named, **(extra_context or {})})

    @admin.display(description="when", ordering="timestamp")
    def when(self, entry):
        zone = entry.merchant.time_zone if entry.merchant else "UTC"
        return dashboard_time(entry.timestamp, zone)

    @admin.display(description="who")
    def who(self, entry):
        if entry.actor is not None:
            return entry.actor.get_username()
        named = (entry.additional_data or {}).get("actor")
        return named or "Receco (no one signed in)"

    @admin.display(description="from")
    def address(self, entry):
        return entry.remote_addr or "—"

    @admin.display(description="what")
    def what(self, entry):
        return headline(entry)

    @admin.display(description="changes")
    def change_list(self, entry):
        changes = entry.changes_dict
        if not changes:
            return "—"
        zone = entry.merchant.time_zone if entry.merchant else "UTC"
        rows = [(_field_words(field), _shown(_named(field, values), zone)) for field, values in changes.items()]
        rows = [(field, shown) for field, shown in rows if shown is not None]
        if not rows:
            return "—"
        return format_html('<ul class="audit-changes">{}</ul>', format_html_join("", "<li>{}: {}</li>", rows))


def _field_words(field: str) -> str:
    """A changed field by the name the dashboard gives it (dashboard.plain_words)."""
    return FIELD_WORDS.get(field, field.replace("_", " "))


def _named(field: str, values):
    """A key's successor by its name and prefix rather than its row id (rotations are rare:
    a query for each one shown)."""
    if field == "tax_id_scheme" and isinstance(values, list):
        return [tax_id_type(value) if value else value for value in values]
    if field != "rotated_to" or not isinstance(values, list):
        return values
    return [
        str(ApiKey.objects.filter(pk=value).first() or value) if str(value).isdigit() else value for value in values
    ]


def _word(value, zone: str) -> str:
    """A value as the trail says it: yes or no for a flag, a moment in the shop's time,
    the items of a list, a dash for nothing."""
    if value in (None, "", "None", "[]"):
        return "—"
    if not isinstance(value, str):
        return value
    if value in ("True", "False"):
        return "Yes" if value == "True" else "No"
    if value.startswith("[") and value.endswith("]"):  # a list as django-auditlog writes it
        return ", ".join(item.strip(" '\"") for item in value[1:-1].split(","))
    moment = _moment(value)
    return value if moment is None else dashboard_time(moment, zone)


def _moment(value: str):
    """The moment ``value`` writes (as django-auditlog writes a date and time: in UTC, with
    or without its offset), or None."""
    try:
        moment = parse_datetime(value) if value[:4].isdigit() else None
    except ValueError:
        return None
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _shown(values, zone: str) -> str | None:
    """One field's change as the trail shows it; None for a field made empty."""
    if isinstance(values, dict):  # many-to-many changes; none of the audited models has one
        return str(values)
    old, new = (list(values) + [None, None])[:2]
    old, new = (_word(value, zone) for value in (old, new))
    if old == new == SECRET:
        return "changed (never shown)"
    if old == "—":
        return None if new == "—" else str(new)
    return f"{old} → {new}"
