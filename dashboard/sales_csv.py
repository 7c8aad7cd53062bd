"""The dashboard's export of sales as CSV (the receipts list's action), for a spreadsheet:
one row per receipt, a refund a row of its own (status *Refund*, ``refund_of`` its sale), so
that a column of totals adds up to the takings. An item per row would repeat each sale's
total on every line of it; the items are one cell of text instead
(``2 × Jollof rice @ 500.00; 1 × Chapman @ 300.00``).

Money is a number a spreadsheet sums (``1340.00``, the currency in its own column), with the
minor units the API speaks beside it; statuses and payment methods are in words, as the
dashboard shows them; dates in UTC and in the shop's time zone. Every cell goes through
receco.lib.csvcells, so that no text a POS sent runs as a formula. The file starts with a
byte order mark, by which spreadsheets read it as UTF-8 (₦, ×, names in any script).
"""

import csv
from collections.abc import Iterator

from django.db.models import QuerySet

from merchants.zones import local_time
from receco.lib.csvcells import safe_cell
from receipts.models import Receipt
from receipts.money import plain_amount
from receipts.rendering.display import words
from receipts.rendering.representation import iso_utc

BOM = "\ufeff"


def items_text(receipt: Receipt) -> str:
    """``receipt``'s items in one line: ``2 × Jollof rice @ 500.00; 1 × Chapman @ 300.00``,
    with an item's total after ``=`` when it is not its quantity times its price."""
    parts = []
    for item in receipt.items:
        quantity, unit_price = item.get("quantity", 1), item.get("unit_price", 0)
        part = f"{quantity} × {item.get('name', '')} @ {plain_amount(unit_price, receipt.currency)}"
        total = item.get("total_price", quantity * unit_price)
        if total != quantity * unit_price:
            part += f" = {plain_amount(total, receipt.currency)}"
        parts.append(part)
    return "; ".join(parts)


COLUMNS = [
    ("short_code", lambda r: r.short_code),
    ("receipt_number", lambda r: r.receipt_number or ""),
    ("token", lambda r: r.token),
    ("merchant_id", lambda r: r.merchant.string_id),
    ("merchant_name", lambda r: r.merchant_name),
    ("total_amount", lambda r: plain_amount(r.total_amount, r.currency)),
    ("total_amount_minor_units", lambda r: r.total_amount),
    ("currency", lambda r: r.currency),
    ("transaction_date", lambda r: iso_utc(r.transaction_date)),
    # The same moments as the shop reads them, in its time zone (named in time_zone).
    ("transaction_date_local", lambda r: local_time(r.transaction_date, r.merchant.time_zone, "Y-m-d H:i")),
    ("time_zone", lambda r: r.merchant.time_zone),
    ("livemode", lambda r: "live" if r.livemode else "test"),
    ("status", lambda r: words("refund" if r.refund_of_id else r.status)),
    ("refund_of", lambda r: r.refund_of.short_code if r.refund_of_id else ""),
    ("payment_method", lambda r: words(r.payment_method)),
    ("category", lambda r: r.category or ""),
    ("location", lambda r: r.location or ""),
    ("customer_email", lambda r: r.customer_email or ""),
    ("customer_phone", lambda r: r.customer_phone or ""),
    ("items", items_text),
    ("created_at", lambda r: iso_utc(r.created_at)),
    ("created_at_local", lambda r: local_time(r.created_at, r.merchant.time_zone, "Y-m-d H:i")),
]


class _Echo:
    """A file that hands back what is written to it: csv.writer's rows, one at a time."""

    def write(self, value: str) -> str:
        return value


def lines(receipts: QuerySet) -> Iterator[str]:
    """The CSV of ``receipts`` (newest first), line by line, for a streamed response."""
    writer = csv.writer(_Echo())
    yield BOM + writer.writerow([name for name, _ in COLUMNS])
    ordered = receipts.select_related("merchant", "refund_of").order_by("-created_at")
    for receipt in ordered.iterator(chunk_size=2000):
        yield writer.writerow([safe_cell(value(receipt)) for _, value in COLUMNS])
