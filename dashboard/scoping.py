"""Scoping the admin to the merchants a staff user belongs to (MerchantMembership).

Superusers (the operator) see everything. Any other staff user sees only the rows of
their own merchants, whatever Django model permissions they hold: access comes from the
membership, so a dashboard user needs no permission set up by hand. Members look;
owners also change what an admin allows them to.
"""

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from merchants.models import Merchant, MerchantMembership

_OWNER = (MerchantMembership.Role.OWNER,)


def merchant_ids(request: HttpRequest, *, owner: bool = False) -> list[int] | None:
    """Ids of the merchants the signed-in user acts for (as owner), None meaning all.

    Looked up once per request.
    """
    user = request.user
    if not (user.is_active and user.is_staff):
        return []
    if user.is_superuser:
        return None
    attribute = "_receco_owner_ids" if owner else "_receco_merchant_ids"
    if not hasattr(request, attribute):
        ids = MerchantMembership.objects.merchant_ids_for(user, roles=_OWNER if owner else None)
        setattr(request, attribute, ids)
    return getattr(request, attribute)


def allowed(ids: list[int] | None, merchant_id: int | None) -> bool:
    return ids is None or merchant_id in ids


class MerchantFilter(admin.SimpleListFilter):
    """Filter by merchant, offering only the user's own; hidden when there is one to offer
    and none chosen. An operator with many merchants is offered only the chosen one
    (reached through the links of the merchant list) rather than a list of thousands."""

    title = "merchant"
    parameter_name = "merchant"
    longest_list = 100

    def lookups(self, request, model_admin):
        ids = merchant_ids(request)
        merchants = Merchant.objects.all() if ids is None else Merchant.objects.filter(pk__in=ids)
        if ids is None and merchants.count() > self.longest_list:
            chosen = self.value() if self.value() and self.value().isdigit() else None
            merchants = merchants.filter(pk=chosen) if chosen else merchants.none()
        choices = [(str(m.pk), f"{m.name} ({m.string_id})") for m in merchants]
        return choices if len(choices) > 1 or self.value() else []

    def queryset(self, request, queryset):
        if self.value() and self.value().isdigit():
            return queryset.filter(**{f"{self.merchant_path}__pk": int(self.value())})
        return queryset


class MerchantScopedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose rows belong to a merchant through ``merchant_path``.

    Staff users see the rows of their merchants only (superusers all); views are allowed
    to members and owners, adding/changing/deleting to nobody but superusers unless a
    subclass says otherwise (``owners_may_add``, ``owners_may_change``).
    """

    merchant_path = "merchant"
    owners_may_add = False
    owners_may_change = False
    # The list page's heading in a shop owner's words ("API keys"), instead of Django's
    # "Select API key to change".
    list_title: str | None = None
    # A record's heading likewise ("Shop details"), instead of "Change merchant".
    change_title: str | None = None

    def changelist_view(self, request, extra_context=None):
        titled = {"title": self.list_title} if self.list_title else {}
        return super().changelist_view(request, {**titled, **(extra_context or {})})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        titled = {"title": self.change_title} if self.change_title else {}
        return super().change_view(request, object_id, form_url, {**titled, **(extra_context or {})})

    # A record's history in plain words, its times in its shop's time zone.
    object_history_template = "admin/history.html"

    def merchant_id_of(self, obj) -> int | None:
        return getattr(obj, f"{self.merchant_path}_id")

    def history_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        merchant = Merchant.objects.filter(pk=self.merchant_id_of(obj)).first() if obj is not None else None
        zone = {"time_zone": merchant.time_zone if merchant else "UTC"}
        return super().history_view(request, object_id, {**zone, **(extra_context or {})})

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        # Django's admin answers a row it cannot find (another merchant's, by its id, or none)
        # by a redirect to the home page; here it is a 404, as the refund and void pages answer,
        # on the change, delete and history pages alike: nothing says whether the row exists.
        context = {
            **self.admin_site.each_context(request),
            "title": f"No such {opts.verbose_name}",
            "opts": opts,
            "list_url": reverse(
                f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=self.admin_site.name
            ),
        }
        return TemplateResponse(request, "admin/not_found.html", context, status=404)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        ids = merchant_ids(request)
        return queryset if ids is None else queryset.filter(**{f"{self.merchant_path}__in": ids})

    def get_list_filter(self, request):
        filters = list(super().get_list_filter(request))
        scoped = type("ScopedMerchantFilter", (MerchantFilter,), {"merchant_path": self.merchant_path})
        return [scoped, *filters]

    def merchant_choices(self):
        """The merchants a new row may belong to, before the user's own are picked from them."""
        return Merchant.objects.all()

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # A row's merchant is one the user owns (superusers: any), the only one preselected.
        if db_field.name == self.merchant_path:
            ids = merchant_ids(request, owner=True)
            choices = self.merchant_choices()
            kwargs["queryset"] = choices if ids is None else choices.filter(pk__in=ids)
            if ids is not None and len(ids) == 1:
                kwargs["initial"] = ids[0]
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_module_permission(self, request):
        return merchant_ids(request) != []

    def has_view_permission(self, request, obj=None):
        ids = merchant_ids(request)
        if obj is None:
            return ids != []
        return ids != [] and allowed(ids, self.merchant_id_of(obj))

    def _owner_may(self, request, obj) -> bool:
        ids = merchant_ids(request, owner=True)
        if obj is None:
            return ids != []
        return ids != [] and allowed(ids, self.merchant_id_of(obj))

    def has_add_permission(self, request):
        if request.user.is_superuser:
            return super().has_add_permission(request)
        return self.owners_may_add and self._owner_may(request, None)

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self.owners_may_change and self._owner_may(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)
