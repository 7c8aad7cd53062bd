"""The dashboard's navigation by a shop's tasks (Today, Find a sale, Receipts, Refunds,
API keys, Webhooks, E-invoicing, Team, Audit trail, Shop details), shown on every page in place of
the admin's list of models. Each entry is shown only to users whose admin lets them
see its page, so the bar never offers a door that answers 403.

The breadcrumbs name a page's section as the bar does (``section``: the entry marked
current; ``templates/admin/_breadcrumbs_section.html``), not by the admin's app."""

from dataclasses import dataclass

from django.apps import apps
from django.contrib.admin import AdminSite
from django.contrib.admin.exceptions import NotRegistered
from django.http import HttpRequest
from django.urls import reverse

from dashboard.scoping import merchant_ids


@dataclass(frozen=True)
class Task:
    label: str
    url: str
    current: bool
    model: str = ""  # the model (``app.model``) whose list the entry opens; Today's none


def _entry(site: AdminSite, request: HttpRequest, model_label: str):
    """The ModelAdmin of ``app.model`` if the user may see its pages here, else None."""
    try:
        model_admin = site.get_model_admin(apps.get_model(model_label))
    except (LookupError, NotRegistered):
        return None
    visible = model_admin.has_module_permission(request) and model_admin.has_view_permission(request)
    return model_admin if visible else None


def tasks(site: AdminSite, request: HttpRequest) -> list[Task]:
    """The entries of the navigation bar for this user, the page being shown marked current."""
    if not site.has_permission(request):
        return []
    receipts = reverse(f"{site.name}:receipts_receipt_changelist")
    found: list[tuple[str, str, str, str]] = [("Today", reverse(f"{site.name}:index"), "index", "")]
    if _entry(site, request, "receipts.receipt"):
        # A code, an amount, a card's last four or an item typed into the receipts list's
        # search box, the cursor put there (ReceiptAdmin.changelist_view).
        found += [("Find a sale", f"{receipts}?find=1", "find", "receipts.receipt")]
        found += [("Receipts", receipts, "receipts", "receipts.receipt")]
        found += [("Refunds", f"{receipts}?type=refund", "refunds", "receipts.receipt")]
    for label, model, name in [
        ("API keys", "merchants.apikey", "merchants_apikey_changelist"),
        ("Webhooks", "webhooks.endpoint", "webhooks_endpoint_changelist"),
        ("E-invoicing", "einvoicing.einvoicing", "einvoicing_einvoicing_changelist"),
        ("Team", "merchants.merchantmembership", "merchants_merchantmembership_changelist"),
        ("Audit trail", "merchants.auditentry", "merchants_auditentry_changelist"),
    ]:
        if _entry(site, request, model):
            found.append((label, reverse(f"{site.name}:{name}"), name, model))
    shop = _shop_details(site, request)
    if shop:
        found.append(shop)
    current = _current(request, found)
    return [Task(label, url, key == current, model) for label, url, key, model in found]


def section(entries: list[Task]) -> Task | None:
    """The entry of the page shown, which its breadcrumbs name after Today (None on Today
    and on pages of no entry, whose breadcrumbs keep the admin's app and model)."""
    return next((task for task in entries if task.current and task.model), None)


def _shop_details(site: AdminSite, request: HttpRequest) -> tuple[str, str, str, str] | None:
    if not _entry(site, request, "merchants.merchant"):
        return None
    ids = merchant_ids(request)
    if ids is not None and len(ids) == 1:
        url = reverse(f"{site.name}:merchants_merchant_change", args=[ids[0]])
        return ("Shop details", url, "shop", "merchants.merchant")
    label = "Merchants" if ids is None else "Shops"
    return (label, reverse(f"{site.name}:merchants_merchant_changelist"), "shop", "merchants.merchant")


def _current(request: HttpRequest, found: list[tuple[str, str, str, str]]) -> str | None:
    """Which entry the page belongs to: the longest path that starts the page's path."""
    path = request.path
    if path == reverse("admin:index"):
        return "index"
    best, length = None, 0
    for _, url, key, _ in found:
        base = url.split("?", 1)[0].split("#", 1)[0]
        if key in ("index", "find") or not path.startswith(base) or len(base) <= length:
            continue
        best, length = key, len(base)
    if best == "receipts" and request.GET.get("type") == "refund":
        return "refunds"
    if best is None:  # pages that belong to a task without being its list
        for url_name, key in _BELONGS:
            if path.startswith(reverse(f"admin:{url_name}")):
                return key
    return best


# Pages under another task: a shop's usage, its team's invitations, a webhook's deliveries.
_BELONGS = [
    ("merchants_merchant_changelist", "shop"),
    ("merchants_invitation_changelist", "merchants_merchantmembership_changelist"),
    ("webhooks_delivery_changelist", "webhooks_endpoint_changelist"),
    ("webhooks_attempt_changelist", "webhooks_endpoint_changelist"),
]
