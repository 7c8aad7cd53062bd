"""Refund and void from a sale's page in the dashboard: for the shop's owners (and the
operator); members see the sale, no buttons, and 403 here; another merchant's sale is 404.

A refund takes two steps: the form (items and quantities, an amount, or everything left,
and a reason), then a confirmation of what the customer gets back (the amount, each tax
line's share, the card it goes to), computed by the same rules that then make it
(receipts.refunds.plan_refund, receipts.rendering.documents.next_refund_share). Making it is
``refund()``, refundReceipt's own: its caps, its idempotency (the form's refund token: a
form posted twice makes one refund), its hooks (the refund receipt sent to the sale's
contact through the outbox) and the audit trail (receipts.audit, with the signed-in user
and their address). A void is ``void()``, voidReceipt's own. A shop's owner signed in
speaks for the shop as its API key does: what they make is ``keyed``.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from dashboard.refund_forms import ITEMS, RefundForm, VoidForm, why_it_differs
from dashboard.scoping import allowed, merchant_ids
from receco.errors import ReceiptError
from receipts.codes import new_token
from receipts.models import Receipt
from receipts.money import format_amount
from receipts.refunds import REFUND_EXCEEDS, VOIDED, check_voidable, plan_refund, refund, void
from receipts.rendering.display import refund_breakdown, words
from receipts.rendering.documents import next_refund_share

ALREADY_VOIDED = "This sale was voided already."
REFUNDED_IN_FULL = "This sale has been refunded in full."
CHANNELS = {"email": "email", "sms": "text message"}


def may_act(request: HttpRequest, sale: Receipt) -> bool:
    """Whether the signed-in user may refund or void ``sale``: its shop's owner, or the operator."""
    return allowed(merchant_ids(request, owner=True), sale.merchant_id)


def refund_blocker(sale: Receipt) -> str | None:
    """Why ``sale`` cannot be refunded now (the refund rules' own words), or None."""
    try:
        plan_refund(sale, {"amount": None, "items": None})  # everything that is left
    except ReceiptError as exc:
        return REFUNDED_IN_FULL if exc.message == REFUND_EXCEEDS else exc.message
    return None


def void_blocker(sale: Receipt) -> str | None:
    """Why ``sale`` cannot be voided now (the void rules' own words), or None."""
    if sale.status == VOIDED:
        return ALREADY_VOIDED
    try:
        check_voidable(sale)
    except ReceiptError as exc:
        return exc.message
    return None


def refund_view(model_admin, request: HttpRequest, object_id: int) -> HttpResponse:
    sale = _sale_to_act_on(model_admin, request, object_id)
    if request.method != "POST":
        form = RefundForm(sale, initial={"what": ITEMS, "refund_token": new_token()})
        return _render(model_admin, request, sale, "refund", form=form, blocker=refund_blocker(sale))
    form = RefundForm(sale, request.POST)
    if "change" in request.POST or not form.is_valid():
        return _render(model_admin, request, sale, "refund", form=form)
    if "confirm" not in request.POST:
        return _review(model_admin, request, sale, form)
    try:
        created = refund(sale, form.request, keyed=True)
    except ReceiptError as exc:
        form.add_error(None, exc.message)
        return _render(model_admin, request, sale, "refund", form=form)
    made = created.receipt
    if created.created:
        model_admin.log_change(request, sale, f"Refunded {format_amount(made.total_amount, made.currency)}: {made}")
        _tell_refunded(request, made, created.outcomes.get("deliveries") or [])
    else:
        messages.info(request, format_html("This refund was made already: {}.", _link(made)))
    return HttpResponseRedirect(reverse("admin:receipts_receipt_change", args=[sale.pk]))


def void_view(model_admin, request: HttpRequest, object_id: int) -> HttpResponse:
    sale = _sale_to_act_on(model_admin, request, object_id)
    form = VoidForm(request.POST or None)
    blocker = void_blocker(sale)
    if request.method != "POST" or not form.is_valid():
        return _render(model_admin, request, sale, "void", form=form, blocker=blocker)
    if sale.status == VOIDED:  # a second post of the same form: the first one voided it
        messages.info(request, ALREADY_VOIDED)
    else:
        try:
            void(sale, form.cleaned_data["reason"], keyed=True)
        except ReceiptError as exc:
            form.add_error(None, exc.message)
            return _render(model_admin, request, sale, "void", form=form, blocker=void_blocker(sale))
        model_admin.log_change(request, sale, f"Voided: {form.cleaned_data['reason']}")
        messages.success(request, f"Sale {sale.short_code} voided. Its receipt now says so.")
    return HttpResponseRedirect(reverse("admin:receipts_receipt_change", args=[sale.pk]))


def _sale_to_act_on(model_admin, request: HttpRequest, object_id: int) -> Receipt:
    # The admin's scoped queryset: another merchant's sale is not found, as in every view.
    sale = get_object_or_404(model_admin.get_queryset(request).select_related("merchant"), pk=object_id)
    if not may_act(request, sale):
        raise PermissionDenied
    return sale


def _review(model_admin, request: HttpRequest, sale: Receipt, form: RefundForm) -> HttpResponse:
    """The confirmation: what the customer gets back, by the rules that will make it."""
    try:
        plan = plan_refund(sale, form.request)
    except ReceiptError as exc:
        form.add_error(None, exc.message)
        return _render(model_admin, request, sale, "refund", form=form)
    share = next_refund_share(sale, plan.amount, itemised=bool(plan.lines))
    # The refund receipt as it would be: what the breakdown reads.
    preview = Receipt(total_amount=plan.amount, currency=sale.currency, items=plan.items)
    card = share.payment_details or {}
    money = sale.currency
    context = {
        "form": form,
        "amount": format_amount(plan.amount, money),
        "why": why_it_differs(sale, plan),
        "lines": [(i["name"], i["quantity"], format_amount(i["total_price"], money)) for i in plan.items if plan.lines],
        "breakdown": refund_breakdown(preview, share),
        "card": " ".join(filter(None, [words(card.get("card_brand")), _last4(card.get("card_last4"))])),
        "payment_method": words(sale.payment_method),
        "contact": [
            way for way, given in (("email", sale.customer_email), ("text message", sale.customer_phone)) if given
        ],
    }
    return _render(model_admin, request, sale, "refund_confirm", **context)


def _tell_refunded(request: HttpRequest, made: Receipt, deliveries: list) -> None:
    amount = format_amount(made.total_amount, made.currency)
    sent = [entry.as_data() for entry in deliveries]
    queued = [CHANNELS.get(entry["channel"], entry["channel"]) for entry in sent if entry["status"] == "queued"]
    refused = [entry["message"] for entry in sent if entry["status"] == "limited" and entry.get("message")]
    news = format_html("Refunded {}: refund receipt {}.", amount, _link(made))
    if queued:
        news = format_html("{} It is on its way to the customer by {}.", news, " and ".join(queued))
    messages.success(request, news)
    for message in refused:
        messages.warning(request, f"The refund receipt was not sent: {message}.")


def _last4(digits: str | None) -> str:
    return f"•••• {digits}" if digits else ""


def _link(receipt: Receipt):
    url = reverse("admin:receipts_receipt_change", args=[receipt.pk])
    return format_html('<a href="{}">{}</a>', url, receipt.short_code)


def _render(model_admin, request: HttpRequest, sale: Receipt, page: str, **context) -> TemplateResponse:
    titles = {"refund": f"Refund sale {sale.short_code}", "refund_confirm": f"Confirm the refund of {sale.short_code}"}
    titles["void"] = f"Void sale {sale.short_code}"
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "original": sale,
        "title": titles[page],
        "total": format_amount(sale.total_amount, sale.currency),
        **context,
    }
    # Never cached (the admin's wrapper says so): a form shown again from a cache would carry
    # the refund token of a refund already made, and be answered with that one.
    return TemplateResponse(request, f"admin/receipts/receipt/{page}.html", context)
