"""Take everything with me: every receipt sent to a proven contact, from every shop,
refunds included, as one zip of ORF documents (one JSON file per receipt: the document
"Download for your records" gives, ledger.trust) and one CSV listing them.

The zip is streamed as it is made, a few receipts at a time, so that its size never
sits in a worker's memory. What it holds is bounded twice: at most MAX_RECEIPTS
receipts, and at most MAX_BYTES of files before compression, newest first. A shop may
send one address thousands of receipts of hundreds of items each; the bytes bound holds
the work (and so the time a worker spends) to what an ordinary customer's receipts need,
whatever a shop sent. When receipts are left out, the CSV's last line says so
(docs/privacy.md).

File names are made here from the date, the shop (ASCII letters, digits and dashes) and
the short code, which is unique, never from what a shop typed alone. The CSV's text cells
that a spreadsheet would read as a formula (starting with = + - @, a tab or a line break)
are prefixed with an apostrophe (receco.lib.csvcells: OWASP's advice on CSV injection).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import datetime

from django.utils.text import slugify

from ledger import trust
from locker import listing
from locker.contacts import Contact
from merchants.zones import local_time
from receco.lib.csvcells import safe_cell
from receipts.models import Receipt
from receipts.money import format_amount
from receipts.rendering.display import words

MAX_RECEIPTS = 2000
# The files' bytes before compression. A receipt of a few lines is about 5 KB, so every
# receipt of an ordinary customer fits; 2,000 receipts of 500 lines would be about 500 MB.
MAX_BYTES = 64 * 2**20
# Receipts read from the database at a time: each may hold up to 500 items.
BATCH = 20
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
_SHOP_IN_NAME = 40


def filename(now: datetime) -> str:
    """The zip's name, for the day ``now``: ``receco-receipts-2026-11-22.zip``."""
    return f"receco-receipts-{now.date().isoformat()}.zip"


def newest_ids(contact: Contact) -> list[int]:
    """The ids of the newest MAX_RECEIPTS + 1 receipts sent to ``contact`` (refunds too,
    each its own row), newest first: one more than the zip may hold, to tell whether
    some are left out."""
    ordered = listing.receipts_of(contact).order_by("-transaction_date", "-pk")
    return list(ordered.values_list("pk", flat=True)[: MAX_RECEIPTS + 1])


def _in_batches(ids: list[int]) -> Iterator[Receipt]:
    """The receipts of ``ids`` in that order, BATCH at a time, each with its merchant and sale."""
    for start in range(0, len(ids), BATCH):
        wanted = ids[start : start + BATCH]
        found = Receipt.objects.filter(pk__in=wanted).select_related("merchant", "refund_of").in_bulk()
        yield from (found[pk] for pk in wanted if pk in found)


def file_name(receipt: Receipt) -> str:
    """The receipt's ORF file in the zip: ``receipts/2026-11-20-mama-put-kitchen-MAMA01.orf.json``."""
    day = receipt.transaction_date.date().isoformat()
    shop = slugify(receipt.merchant_name)[:_SHOP_IN_NAME].strip("-") or "shop"
    return f"{FOLDER}/{day}-{shop}-{receipt.short_code}.orf.json"


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


class _Pipe(io.RawIOBase):
    """Where the zip is written: what arrives is handed on by ``take``. It cannot seek, so
    zipfile writes each file's sizes after its data (a data descriptor), as streamed zips do."""

    def __init__(self):
        super().__init__()
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        """What was written since the last call."""
        taken, self._parts = b"".join(self._parts), []
        return taken


def stream(contact: Contact) -> Iterator[bytes]:
    """The zip of everything sent to ``contact``, in pieces as it is made: the ORF files of
    the newest receipts that fit MAX_RECEIPTS and MAX_BYTES, then the CSV of them."""
    ids = newest_ids(contact)
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\r\n")
    writer.writerow(HEADER)
    pipe = _Pipe()
    count, size, complete = 0, 0, len(ids) <= MAX_RECEIPTS
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for receipt in _in_batches(ids[:MAX_RECEIPTS]):
            content = json.dumps(trust.document(receipt), indent=2, ensure_ascii=False).encode()
            if size + len(content) > MAX_BYTES:
                complete = False
                break
            name = file_name(receipt)
            archive.writestr(name, content)
            writer.writerow(csv_row(receipt, name))
            count, size = count + 1, size + len(content)
            yield pipe.take()
        if not complete:
            writer.writerow(
                [
                    f"Only the newest {count} receipts are in this file: it holds at most {MAX_RECEIPTS} "
                    f"receipts and {MAX_BYTES // 2**20} MB."
                ]
            )
        # A byte-order mark, so that spreadsheets read the naira sign as UTF-8.
        archive.writestr(CSV_NAME, "\ufeff" + table.getvalue())
    yield pipe.take()
