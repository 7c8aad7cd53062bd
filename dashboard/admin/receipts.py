"""Receipts in the merchant dashboard: scoped to the staff user's merchants, found as a shop
finds a sale (dashboard.search), exportable as CSV; read-only but for the refund and void
pages of a sale, for its owners (dashboard.refund_pages), and its "Send again" (dashboard.resend)
for its shop's staff. A sale's page says what became of each message sent to its customer
(the provider's delivery report) and where its report to NRS stands."""

import re
from datetime import date

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponseNotAllowed, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from customers.forms.receipts import ContactForm
from customers.views.receipts import sheet_context
from dashboard import refund_pages, resend, sales_csv
from dashboard.plain_words import details
from dashboard.scoping import MerchantScopedAdmin, merchant_ids
from dashboard.search import (
    MONTH_FIRST,
    SearchPaginator,
    names_no_day,
    read_term,
    sale_days,
    searched_days,
    why,
)
from einvoicing import state as einvoicing_state
from einvoicing.models import EInvoicing
from ledger.standing import not_in_log
from merchants.models import Merchant
from merchants.zones import dashboard_time
from messaging.customers import DeliveryLimited
from receco.errors import InvalidInput
from receipts.contacts import mask_email, mask_phone
from receipts.models import Receipt, Void
from receipts.money import format_amount
from receipts.rendering import display
from receipts.rendering.documents import title

CUSTOMER_VIEW = "admin/receipts/receipt/customer_view.html"

# A receipt number as printed: its series (prefix, till, year, TEST- first) and number.
# A receipt number as printed: its series (MP-2026, MP-TILL3-2026, TEST-MP-2026) and six
# digits or more, so that a day typed as 2026-11-22 is not read as one.
_NUMBER = re.compile(r"(?P<series>[A-Z0-9]+(?:-[A-Z0-9]+){1,3})-(?P<number>[0-9]{6,18})")


def _numbered(typed: str) -> Q | None:
    """The receipt a typed receipt number names, as a filter; None when it names none."""
    found = _NUMBER.fullmatch(typed.strip().upper())
    if found is None:
        return None
    return Q(number_series=found["series"], number=int(found["number"]))


class SetAsideFilter(admin.SimpleListFilter):
    title = "code moved to another sale"
    parameter_name = "set_aside"

    def lookups(self, request, model_admin):
        return [("yes", "Yes: sent without the shop's key, it gave its code to a sale sent with the key")]

    def queryset(self, request, queryset):
        return queryset.filter(set_asides__isnull=False).distinct() if self.value() == "yes" else queryset


class ModeFilter(admin.SimpleListFilter):
    title = "test or live"
    parameter_name = "mode"

    def lookups(self, request, model_admin):
        return [("live", "Live: real sales"), ("test", "Test: made with a test key or by a test merchant")]

    def queryset(self, request, queryset):
        if self.value() in ("live", "test"):
            return queryset.filter(livemode=self.value() == "live")
        return queryset


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [(status, display.words(status)) for status in ("completed", "partially_refunded", "refunded", "voided")]

    def queryset(self, request, queryset):
        return queryset.filter(status=self.value()) if self.value() else queryset


class SaleDateFilter(admin.DateFieldListFilter):
    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        self.title = "sale date"


def _calendars(request) -> list[tuple[str, str]]:
    """The (country, time zone) of each merchant whose receipts ``request``'s user sees: a
    day typed into the search is read as its shop writes it, and a day of sales is a day in
    its merchant's zone."""
    ids = merchant_ids(request)
    merchants = Merchant.objects.all() if ids is None else Merchant.objects.filter(pk__in=ids)
    return sorted(set(merchants.values_list("country", "time_zone"))) or [("", "UTC")]


def _zones(request) -> list[str]:
    """The time zones of the merchants whose receipts ``request``'s user sees."""
    return sorted({zone for _, zone in _calendars(request)})


class SaleDaysFilter(admin.SimpleListFilter):
    """Sales from one day to another, both included, in the shop's time zone."""

    title = "days of sale"
    parameter_name = "sold_from"
    to_parameter = "sold_to"
    template = "admin/receipts/receipt/days_filter.html"

    def __init__(self, request, params, model, model_admin):
        self.to_value = params.get(self.to_parameter)
        if isinstance(self.to_value, list):
            self.to_value = self.to_value[-1]
        super().__init__(request, params, model, model_admin)
        params.pop(self.to_parameter, None)
        self.zones = lambda: _zones(request)

    def has_output(self):
        return True

    def expected_parameters(self):
        return [self.parameter_name, self.to_parameter]

    def lookups(self, request, model_admin):
        return []

    def days(self) -> tuple[date, date] | None:
        values = [_day(self.value()), _day(self.to_value)]
        given = [value for value in values if value is not None]
        if not given:
            return None
        return min(given), max(given)

    def queryset(self, request, queryset):
        days = self.days()
        return queryset.filter(sale_days(*days, self.zones())) if days else queryset

    def choices(self, changelist):
        kept = {k: v for k, v in changelist.params.items() if k not in (*self.expected_parameters(), "p")}
        yield {
            "from": self.value() or "",
            "to": self.to_value or "",
            "hidden": sorted(kept.items()),
            "clear": changelist.get_query_string(remove=self.expected_parameters()),
        }


def _day(value) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


class TypeFilter(admin.SimpleListFilter):
    title = "type"
    parameter_name = "type"

    def lookups(self, request, model_admin):
        return [("sale", "Sales"), ("refund", "Refunds")]

    def queryset(self, request, queryset):
        if self.value() in ("sale", "refund"):
            return queryset.filter(refund_of__isnull=self.value() == "sale")
        return queryset


# The query parameter of the task bar's "Find a sale", which the list drops (ReceiptAdmin.changelist_view).
FIND = "find"


def items_searched(request) -> bool:
    """Whether the search reads items' names: for the receipts of the user's shops, which
    the merchant's index narrows it to, not for the operator's list of every receipt."""
    return merchant_ids(request) is not None


class LogFilter(admin.SimpleListFilter):
    """Live receipts the receipt log does not hold yet (Today links here)."""

    title = "receipt log"
    parameter_name = "logged"

    def lookups(self, request, model_admin):
        return [("no", "Not yet: live receipts the log does not hold yet")]

    def queryset(self, request, queryset):
        return not_in_log(queryset) if self.value() == "no" else queryset


class ReportFilter(admin.SimpleListFilter):
    """Receipts whose report to NRS was refused, or is not made yet (Today links here)."""

    title = "report to NRS"
    parameter_name = "report"

    def lookups(self, request, model_admin):
        # Only for users of a shop that reports (or the operator): elsewhere it would say nothing.
        ids = merchant_ids(request)
        reporting = EInvoicing.objects.filter(enabled=True)
        if ids is not None and not reporting.filter(merchant_id__in=ids).exists():
            return []
        return [("refused", "Refused by NRS"), ("waiting", "Not reported yet")]

    def queryset(self, request, queryset):
        if self.value() == "refused":
            return einvoicing_state.refused(queryset)
        if self.value() == "waiting":
            return einvoicing_state.waiting(queryset)
        return queryset


# What a sale's report to NRS says on its page (einvoicing.state).
REPORT_WORDS = {
    einvoicing_state.REPORTED: "Reported to NRS",
    einvoicing_state.WAITING: "Waiting to be reported to NRS",
    einvoicing_state.REFUSED: "Refused by NRS",
}


class _Echo:
    def write(self, value):
        return value


class ReceiptWords(forms.ModelForm):
    """The sale page's labels in the shop's words (read only: the admin reads them from the
    form's Meta); the model's names are the API's."""

    class Meta:
        model = Receipt
        fields = ["short_code", "merchant", "merchant_name", "customer_email"]
        labels = {
            "short_code": "Receipt code",
            "merchant": "Shop",
            "merchant_name": "Shop name on the receipt",
            "customer_email": "Customer's email",
        }


@admin.register(Receipt)
class ReceiptAdmin(MerchantScopedAdmin):
    list_title = "Receipts"
    form = ReceiptWords
    # What a shop looks for in a sale, in 930 pixels beside the filters at 1280x800; one card
    # a sale on a phone. The shop's name only for users of several shops; when it reached
    # the service, its number and title are on the sale's page.
    list_display = ["receipt_code", "amount", "sale_date", "status_words", "mode", "customer", "merchant_name"]
    list_filter = [
        ModeFilter, TypeFilter, StatusFilter, ("transaction_date", SaleDateFilter), SaleDaysFilter, SetAsideFilter,
        LogFilter, ReportFilter,
    ]  # fmt: skip
    list_select_related = ["merchant"]
    # What the box finds is dashboard.search's, each reading an indexed exact look-up, and a
    # receipt number (its series and number: one index answers both); a short code, token
    # or number that finds one receipt opens it.
    search_fields = ["short_code"]  # for Django to show the box; get_search_results searches
    search_help_text = (
        "{item}receipt code, number ({number}) or token, an amount (19,522.50), a card's last 4 digits, "
        "the customer's email or phone, a day ({day}, yesterday), days ({days}) or a month (Nov 2026)."
    )
    # Counting a large table on every page costs more than the page itself.
    show_full_result_count = False
    actions = ["export_csv"]
    fields = [
        "short_code",
        "receipt_no",
        "document_title",
        "token_words",
        "merchant",
        "merchant_name",
        "amount",
        "sale_date",
        "mode",
        "kind",
        "status_words",
        "item_table",
        "breakdown",
        "category",
        "payment_method_words",
        "payment",
        "location",
        "refund_of_link",
        "refund_list",
        "void_note",
        "nrs_report",
        "customer_email",
        "customer_phone_words",
        "sent_to_customer",
        "received",
        "updated",
        "set_aside",
    ]
    readonly_fields = fields

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        numbered = _numbered(search_term)
        if numbered is not None:
            return queryset.filter(numbered), False
        days = searched_days(search_term, _calendars(request), timezone.now())
        if days is not None:
            return queryset.filter(days), False
        term = read_term(search_term, items=items_searched(request))
        return (queryset.filter(term.query) if term else queryset.none()), False

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        # A search counts what it found up to a bound; the list of all sales counts them all.
        if request.GET.get("q", "").strip():
            return SearchPaginator(queryset, per_page, orphans, allow_empty_first_page)
        return super().get_paginator(request, queryset, per_page, orphans, allow_empty_first_page)

    def get_changelist_instance(self, request):
        cl = super().get_changelist_instance(request)
        # "More than 1000 results" (templates/admin/search_form.html, the model's pagination.html).
        cl.more_than = getattr(cl.paginator, "more_than", None)
        calendars = _calendars(request)
        # Days written as the user's shops write them: 11/26/2026 where they all put the month first.
        month_first = all(country in MONTH_FIRST for country, _ in calendars)
        cl.search_help_text = format_html(
            self.search_help_text,
            # Items' names are searched for the users of shops, not the operator (items_searched).
            item="A word of an item (jollof), a " if items_searched(request) else "A ",
            number=format_html('<span class="keep">{}</span>', "MP-2026-000123"),  # one line on a phone
            day="11/26/2026, Nov 26" if month_first else "26/11/2026, 26 Nov",
            days="11/20 - 11/22" if month_first else "20/11 - 22/11",
        )
        # Why a search found nothing, when the term itself says it (the search box shows it).
        if cl.query and not cl.result_count and names_no_day(cl.query, calendars, timezone.now()):
            cl.search_note = "the calendar has no such day"
        return cl

    def changelist_view(self, request, extra_context=None):
        # The task bar's "Find a sale": the list with the cursor in its search box.
        find = FIND in request.GET
        if find:
            request.GET = request.GET.copy()
            del request.GET[FIND]
            extra_context = {"title": "Find a sale", **(extra_context or {})}
        # A code typed at the counter, a number read out or a token scanned opens its sale in one step.
        if set(request.GET) == {"q"}:
            typed = request.GET["q"]
            term = read_term(typed)
            query = _numbered(typed) or (term.reference if term is not None else None)
            if query is not None:
                found = list(self.get_queryset(request).filter(query).values_list("pk", flat=True)[:2])
                if len(found) == 1:
                    return HttpResponseRedirect(reverse("admin:receipts_receipt_change", args=found))
        if request.GET.get("type") == "refund":  # the task bar's Refunds
            extra_context = {"title": "Refunds", **(extra_context or {})}
        response = super().changelist_view(request, extra_context)
        if find and "cl" in (getattr(response, "context_data", None) or {}):
            response.context_data["cl"].autofocus = True  # the search box's (templates/admin/search_form.html)
        return response

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<int:object_id>/refund/", wrap(self.refund_view), name="receipts_receipt_refund"),
            path("<int:object_id>/void/", wrap(self.void_view), name="receipts_receipt_void"),
            path("<int:object_id>/send/", wrap(self.resend_view), name="receipts_receipt_resend"),
            *super().get_urls(),
        ]

    def refund_view(self, request, object_id):
        return refund_pages.refund_view(self, request, object_id)

    def void_view(self, request, object_id):
        return refund_pages.void_view(self, request, object_id)

    def resend_view(self, request, object_id):
        """POST: send the sale's receipt again, to its contact or to the one typed (dashboard.resend);
        then back to its page, which says what became of it (post, redirect, get)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        # The admin's scoped queryset: another merchant's sale is not found, as in every view.
        sale = get_object_or_404(self.get_queryset(request).select_related("merchant"), pk=object_id)
        if not refund_pages.may_act(request, sale):
            raise PermissionDenied  # members look; owners act
        back = reverse("admin:receipts_receipt_change", args=[sale.pk])  # its top, which says what became of it
        email, phone = None, None
        if any(request.POST.get(field, "").strip() for field in ("email", "phone")):  # a new contact
            form = ContactForm(request.POST)
            if not form.is_valid():
                for errors in form.errors.values():
                    for error in errors:
                        messages.error(request, f"Not sent: {error}")
                return HttpResponseRedirect(back)
            email, phone = form.cleaned_data["email"], form.cleaned_data["phone"]
        try:
            planned = resend.resend(sale, email, phone)
        except (InvalidInput, DeliveryLimited) as refused:
            messages.error(request, f"Not sent: {refused.message}.")
            return HttpResponseRedirect(back)
        words = resend.outcome_words(planned)
        if sale.is_test:
            words = f"Test receipt: nothing reaches the customer. {words}"
        messages.success(request, words)
        return HttpResponseRedirect(back)

    def get_fields(self, request, obj=None):
        fields = list(super().get_fields(request, obj))
        # Where the report to NRS stands only for a receipt that is reported at all.
        if obj is None or einvoicing_state.state_of(obj) is None:
            fields.remove("nrs_report")
        return fields

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        sale = self.get_object(request, object_id)
        if sale is not None:
            # The receipt as its customer sees it, rendered by the customer page's own partials.
            extra_context["customer_view"] = render_to_string(CUSTOMER_VIEW, sheet_context(sale))
            # Its print view is the customer's page, which prints as a receipt (receipts/print.css).
            extra_context["print_url"] = sale.get_absolute_url()
        if sale is not None and refund_pages.may_act(request, sale):
            extra_context["send_again"] = {
                "email": mask_email(sale.customer_email),
                "phone": mask_phone(sale.customer_phone),
            }
        if sale is not None and refund_pages.may_act(request, sale):
            extra_context["can_refund"] = refund_pages.refund_blocker(sale) is None
            extra_context["can_void"] = refund_pages.void_blocker(sale) is None
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="receipt code", ordering="short_code")
    def receipt_code(self, receipt):
        return receipt.short_code

    @admin.display(description="number")
    def receipt_no(self, receipt):
        return receipt.receipt_number or "—"

    @admin.display(description="title")
    def document_title(self, receipt):
        return title(receipt)

    def get_list_display(self, request):
        ids = merchant_ids(request)
        columns = list(self.list_display)
        if ids is not None and len(ids) == 1:  # one shop: the column would say the same on every row
            columns.remove("merchant_name")
        typed = request.GET.get("q", "").strip()
        if typed:  # a search: why each sale found was found, beside its code
            items = items_searched(request)

            @admin.display(description="matched")
            def matched(receipt):
                return why(receipt, typed, items=items) or "—"

            columns.insert(1, matched)
        return columns

    @admin.display(description="receipt link code")
    def token_words(self, receipt):
        return details(receipt.token, "In the API: token. The customer's link ends with it, or with the code above.")

    @admin.display(description="customer's phone")
    def customer_phone_words(self, receipt):
        return receipt.customer_phone or "—"

    @admin.display(description="customer")
    def customer(self, receipt):
        return receipt.customer_email or receipt.customer_phone or "—"

    @admin.display(description="sale date", ordering="transaction_date")
    def sale_date(self, receipt):
        return dashboard_time(receipt.transaction_date, receipt.merchant.time_zone)

    @admin.display(description="received", ordering="created_at")
    def received(self, receipt):
        return dashboard_time(receipt.created_at, receipt.merchant.time_zone)

    @admin.display(description="updated")
    def updated(self, receipt):
        return dashboard_time(receipt.updated_at, receipt.merchant.time_zone)

    @admin.display(description="status", ordering="status")
    def status_words(self, receipt):
        """A refund receipt says so; a sale says what became of it."""
        return "Refund" if receipt.refund_of_id else display.words(receipt.status)

    @admin.display(description="payment method")
    def payment_method_words(self, receipt):
        return display.words(receipt.payment_method) or "—"

    @admin.display(description="type")
    def kind(self, receipt):
        return "Refund" if receipt.refund_of_id else "Sale"

    @admin.display(description="breakdown")
    def breakdown(self, receipt):
        rows = display.breakdown(receipt, receipt.details or {})
        if not rows:
            return "—"
        return format_html_join("", "<div>{}: {}</div>", ((row.label, row.amount) for row in rows))

    @admin.display(description="card")
    def payment(self, receipt):
        payment = receipt.detail("payment_details") or {}
        # The card as the customer's receipt names it ("Visa •••• 4242"), kept on one line.
        card = display.card_words(payment)
        parts = [format_html('<span class="keep">{}</span>', card) if card else ""]
        if payment.get("authorization_code"):
            parts.append(format_html("authorisation {}", payment["authorization_code"]))
        return format_html_join(" · ", "{}", ((part,) for part in parts if part)) or "—"

    @admin.display(description="refund of")
    def refund_of_link(self, receipt):
        if not receipt.refund_of_id:
            return "—"
        url = reverse("admin:receipts_receipt_change", args=[receipt.refund_of_id])
        reason = receipt.detail("reason")
        return format_html(
            '<a href="{}">{}</a>{}', url, receipt.detail("refund_of_short_code"), f": {reason}" if reason else ""
        )

    @admin.display(description="refunds")
    def refund_list(self, receipt):
        refunds = list(receipt.refunds.all())
        if not refunds:
            return "—"
        names = [str(item.get("name", "")) for item in receipt.items]

        def given_back(refund):
            lines = [f"{names[line['index']]} × {line['quantity']}" for line in refund.detail("lines") or []]
            reason = refund.detail("reason")
            return " · ".join(filter(None, [", ".join(lines), reason]))

        return format_html_join(
            "",
            '<div><a href="{}">{}</a>: {}{}</div>',
            (
                (
                    reverse("admin:receipts_receipt_change", args=[r.pk]),
                    r.receipt_number or r.short_code,
                    format_amount(r.total_amount, r.currency),
                    f" ({given_back(r)})" if given_back(r) else "",
                )
                for r in sorted(refunds, key=lambda r: r.created_at)
            ),
        )

    @admin.display(description="voided")
    def void_note(self, receipt):
        void = Void.objects.filter(receipt=receipt).first()
        if void is None:
            return "—"
        when = dashboard_time(void.created_at, receipt.merchant.time_zone)
        return when + (f": {void.reason}" if void.reason else "")

    @admin.display(description="report to NRS")
    def nrs_report(self, receipt):
        state = einvoicing_state.state_of(receipt)
        if state is None:
            return "—"
        words = REPORT_WORDS[state.state]
        if state.message:
            words = f"{words}: {state.message}"
        return format_html("{}<div>IRN {}</div>", words, state.irn)

    @admin.display(description="sent to the customer")
    def sent_to_customer(self, receipt):
        deliveries = list(receipt.deliveries.order_by("created_at"))
        if not deliveries:
            return "—"
        zone = receipt.merchant.time_zone
        return format_html_join(
            "",
            '<div class="delivery">{} to {}, {}: {}{}</div>',
            (
                (
                    delivery.channel_label,
                    delivery.masked_destination,
                    dashboard_time(delivery.created_at, zone),
                    delivery.get_status_display(),
                    format_html(
                        "; the provider reports <strong>{}</strong> ({})",
                        delivery.report_words,
                        dashboard_time(delivery.reported_at, zone),
                    )
                    if delivery.report
                    else "",
                )
                for delivery in deliveries
            ),
        )

    @admin.display(description="code moved to another sale")
    def set_aside(self, receipt):
        records = list(receipt.set_asides.all())
        if not records:
            return "—"
        return format_html_join(
            "",
            "<p>On {} this receipt, sent without the shop's API key, gave its link code {} and code {} to a sale "
            "sent with the key; it was given the link code and code above, which nobody holds.</p>",
            (
                (dashboard_time(r.created_at, receipt.merchant.time_zone), r.claimed_token, r.claimed_short_code)
                for r in records
            ),
        )

    @admin.display(description="total", ordering="total_amount")
    def amount(self, receipt):
        return format_amount(receipt.total_amount, receipt.currency)

    @admin.display(description="test or live", ordering="livemode")
    def mode(self, receipt):
        return "Live" if receipt.livemode else "Test"

    @admin.display(description="items")
    def item_table(self, receipt):
        lines = display.lines(receipt)
        refunded = any(line.refunded for line in lines)
        rows = format_html_join(
            "",
            '<tr><td class="item-name">{}</td><td class="number item-qty">{}</td><td class="number item-unit">{}</td>'
            '<td class="number item-total">{}</td>{}</tr>',
            (
                (
                    line.name,
                    line.quantity,
                    line.unit_price,
                    line.total_price,
                    format_html('<td class="number item-refunded">{}</td>', line.refunded) if refunded else "",
                )
                for line in lines
            ),
        )
        return format_html(
            '<table class="item-table"><thead><tr><th scope="col">Item</th><th scope="col" class="number">Qty</th>'
            '<th scope="col" class="number">Unit price</th><th scope="col" class="number">Total</th>{}</tr></thead>'
            "<tbody>{}</tbody></table>",
            format_html('<th scope="col" class="number">{}</th>', "Refunded") if refunded else "",
            rows,
        )

    def has_add_permission(self, request):
        return False  # receipts come from POS systems only

    def has_change_permission(self, request, obj=None):
        return False  # a receipt is the immutable record of a sale

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Export the selected receipts as CSV", permissions=["view"])
    def export_csv(self, request, queryset):
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = StreamingHttpResponse(sales_csv.lines(queryset), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="receipts-{stamp}.csv"'
        return response
