"""Receipts in the merchant dashboard: read-only, scoped to the staff user's merchants,
searchable by short code, token or email, exportable as CSV."""

import csv
import json

from django.contrib import admin
from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from merchants.scoping import MerchantScopedAdmin, merchant_ids
from merchants.zones import dashboard_time, local_time
from receipts import display
from receipts.models import Receipt, Void
from receipts.money import format_amount
from receipts.representation import iso_utc

CSV_COLUMNS = [
    ("short_code", lambda r: r.short_code),
    ("token", lambda r: r.token),
    ("merchant_id", lambda r: r.merchant.string_id),
    ("merchant_name", lambda r: r.merchant_name),
    ("total_amount", lambda r: r.total_amount),
    ("currency", lambda r: r.currency),
    ("transaction_date", lambda r: iso_utc(r.transaction_date)),
    # The same moments as the shop reads them, in its time zone (named in time_zone).
    ("transaction_date_local", lambda r: local_time(r.transaction_date, r.merchant.time_zone, "Y-m-d H:i")),
    ("time_zone", lambda r: r.merchant.time_zone),
    ("livemode", lambda r: "live" if r.livemode else "test"),
    ("status", lambda r: r.status),
    ("payment_method", lambda r: r.payment_method or ""),
    ("category", lambda r: r.category or ""),
    ("location", lambda r: r.location or ""),
    ("customer_email", lambda r: r.customer_email or ""),
    ("customer_phone", lambda r: r.customer_phone or ""),
    ("items", lambda r: json.dumps(r.items, ensure_ascii=False)),
    ("created_at", lambda r: iso_utc(r.created_at)),
    ("created_at_local", lambda r: local_time(r.created_at, r.merchant.time_zone, "Y-m-d H:i")),
]

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV
# injection"); item names and locations are free text from the POS.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value):
    """Return ``value`` safe to open in a spreadsheet: text that could start a formula
    gets a leading apostrophe, which spreadsheets show as plain text."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


class SetAsideFilter(admin.SimpleListFilter):
    title = "code given to another sale"
    parameter_name = "set_aside"

    def lookups(self, request, model_admin):
        return [("yes", "Yes: made without the shop's key, its code went to a sale made with the key")]

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


class TypeFilter(admin.SimpleListFilter):
    title = "type"
    parameter_name = "type"

    def lookups(self, request, model_admin):
        return [("sale", "Sales"), ("refund", "Refunds")]

    def queryset(self, request, queryset):
        if self.value() in ("sale", "refund"):
            return queryset.filter(refund_of__isnull=self.value() == "sale")
        return queryset


class _Echo:
    def write(self, value):
        return value


@admin.register(Receipt)
class ReceiptAdmin(MerchantScopedAdmin):
    list_title = "Receipts"
    # What a shop looks for in a sale, in 930 pixels beside the filters at 1280x800; one card
    # a sale on a phone. The shop's name only for users of several shops; when it reached
    # the service is on the sale's page.
    list_display = ["short_code", "amount", "sale_date", "status_words", "mode", "customer", "merchant_name"]
    list_filter = [ModeFilter, TypeFilter, StatusFilter, ("transaction_date", SaleDateFilter), SetAsideFilter]
    list_select_related = ["merchant"]
    # "=" is an exact, case-insensitive match: the unique indexes answer short codes and tokens.
    search_fields = ["=short_code", "=token", "customer_email"]
    search_help_text = "A short code, a token, or (part of) a customer's email address."
    # Counting a large table on every page costs more than the page itself.
    show_full_result_count = False
    actions = ["export_csv"]
    fields = [
        "short_code",
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
        "customer_email",
        "customer_phone_words",
        "received",
        "updated",
        "set_aside",
    ]
    readonly_fields = fields

    def get_list_display(self, request):
        ids = merchant_ids(request)
        if ids is not None and len(ids) == 1:  # one shop: the column would say the same on every row
            return [column for column in self.list_display if column != "merchant_name"]
        return self.list_display

    @admin.display(description="receipt id (in the customer's link)")
    def token_words(self, receipt):
        return receipt.token

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
        parts = [payment.get("card_brand"), payment.get("card_last4") and f"•••• {payment['card_last4']}"]
        if payment.get("authorization_code"):
            parts.append(f"authorisation {payment['authorization_code']}")
        return " · ".join(filter(None, parts)) or "—"

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
        return format_html_join(
            "",
            '<div><a href="{}">{}</a>: {}</div>',
            (
                (
                    reverse("admin:receipts_receipt_change", args=[r.pk]),
                    r.short_code,
                    format_amount(r.total_amount, r.currency),
                )
                for r in refunds
            ),  # fmt: skip
        )

    @admin.display(description="voided")
    def void_note(self, receipt):
        void = Void.objects.filter(receipt=receipt).first()
        if void is None:
            return "—"
        when = dashboard_time(void.created_at, receipt.merchant.time_zone)
        return when + (f": {void.reason}" if void.reason else "")

    @admin.display(description="code given to another sale")
    def set_aside(self, receipt):
        records = list(receipt.set_asides.all())
        if not records:
            return "—"
        return format_html_join(
            "",
            "<p>On {} this receipt, made without the merchant's API key, lost token {} and code {} to a sale sent "
            "with the key; it was given the token and code above, which nobody holds.</p>",
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
            '<tr><td>{}</td><td class="number">{}</td><td class="number">{}</td><td class="number">{}</td>{}</tr>',
            (
                (
                    line.name,
                    line.quantity,
                    line.unit_price,
                    line.total_price,
                    format_html('<td class="number">{}</td>', line.refunded) if refunded else "",
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
        writer = csv.writer(_Echo())

        def rows():
            yield writer.writerow([name for name, _ in CSV_COLUMNS])
            for receipt in queryset.select_related("merchant").order_by("-created_at").iterator(chunk_size=2000):
                yield writer.writerow([csv_cell(value(receipt)) for _, value in CSV_COLUMNS])

        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="receipts-{stamp}.csv"'
        return response
