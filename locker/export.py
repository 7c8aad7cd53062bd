"""Take everything with me: every receipt sent to a proven contact, from every shop,
refunds included, as one zip of ORF documents (one JSON file per receipt: the document
"Download for your records" gives, ledger.trust) and one CSV listing them.

The zip is built in memory, at most MAX_RECEIPTS receipts (the newest); a customer with
more gets those, and the CSV's last line says so (docs/privacy.md). File names are
made here from the date, the shop (ASCII letters, digits and dashes) and the short code,
which is unique, never from what a shop typed alone. The CSV's text cells that a
spreadsheet would read as a formula (starting with = + - @, a tab or a carriage return)
are prefixed with an apostrophe (OWASP's advice on CSV injection).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import datetime

from django.utils.text import slugify

from ledger import trust
from locker import listing
from locker.contacts import Contact
from merchants.zones import local_time
from receipts.display import words
from receipts.models import Receipt
from receipts.money import format_amount

MAX_RECEIPTS = 2000
CSV_NAME = "receipts.csv"
FOLDER = "receipts"
HEADER = [
    "shop",
    "date",
    "number",
    "short_code",
    "total",
    "total_minor_units",
    "currency",
    "status",
    "refund_of",
    "file",
]
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_SHOP_IN_NAME = 40


@dataclass(frozen=True)
class Export:
    """The zip's bytes, its file name and how many receipts it holds (``complete`` when
    none was left out by MAX_RECEIPTS)."""

    content: bytes
    filename: str
    count: int
    complete: bool


def receipts_to_export(contact: Contact) -> tuple[list[Receipt], bool]:
    """The newest MAX_RECEIPTS receipts sent to ``contact`` (refunds too, each its own row),
    newest first, and whether that is all of them."""
    found = list(
        listing.receipts_of(contact)
        .select_related("merchant", "refund_of")
        .order_by("-transaction_date", "-pk")[: MAX_RECEIPTS + 1]
    )
    return found[:MAX_RECEIPTS], len(found) <= MAX_RECEIPTS


def file_name(receipt: Receipt) -> str:
    """The receipt's ORF file in the zip: ``receipts/2026-11-20-mama-put-kitchen-MAMA01.orf.json``."""
    day = receipt.transaction_date.date().isoformat()
    shop = slugify(receipt.merchant_name)[:_SHOP_IN_NAME].strip("-") or "shop"
    return f"{FOLDER}/{day}-{shop}-{receipt.short_code}.orf.json"


def safe_cell(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text: a string that would start a
    formula gets a leading apostrophe; numbers and other strings are kept."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(receipt: Receipt, name: str) -> list:
    """The CSV's line of ``receipt`` (its merchant and sale selected with it)."""
    is_refund = receipt.refund_of_id is not None
    return [
        safe_cell(value)
        for value in (
            receipt.merchant_name,
            local_time(receipt.transaction_date, receipt.merchant.time_zone, "c"),
            receipt.receipt_number or "",
            receipt.short_code,
            format_amount(receipt.total_amount, receipt.currency),
            receipt.total_amount,
            receipt.currency,
            words("refund" if is_refund else receipt.status),
            receipt.refund_of.short_code if is_refund else "",
            name,
        )
    ]


def build(contact: Contact, now: datetime) -> Export:
    """The zip of everything sent to ``contact``, named for the day ``now``."""
    receipts, complete = receipts_to_export(contact)
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\r\n")
    writer.writerow(HEADER)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for receipt in receipts:
            name = file_name(receipt)
            archive.writestr(name, json.dumps(trust.document(receipt), indent=2, ensure_ascii=False))
            writer.writerow(csv_row(receipt, name))
        if not complete:
            writer.writerow([f"Only the newest {MAX_RECEIPTS} receipts are in this file."])
        # A byte-order mark, so that spreadsheets read the naira sign as UTF-8.
        archive.writestr(CSV_NAME, "\ufeff" + table.getvalue())
    return Export(buffer.getvalue(), f"receco-receipts-{now.date().isoformat()}.zip", len(receipts), complete)
