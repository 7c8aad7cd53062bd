"""Where a receipt's report to NRS stands, for the pages that show it (the receipt page,
its print view and email, the ORF document, the dashboard's sale page, Today and its
filter) and for the webhooks that tell the shop's systems.

A receipt's state is that of its own document (a sale's invoice, a refund's credit note)
and, for a voided sale, of its invoice's cancellation: ``refused`` if either was refused,
``waiting`` while either is not reported yet, else ``reported``. A receipt that is not
reported at all (a test receipt, one of a merchant whose e-invoicing is off) has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from einvoicing import qr
from einvoicing.models import Report
from merchants.models import Merchant
from receipts.annexes import Annex
from receipts.models import Receipt
from receipts.rendering.representation import iso_utc

# The ORF document's extension that carries a stamped receipt's IRN and QR code payload.
ORF_EXTENSION = "nrs"
REPORTED, WAITING, REFUSED = Report.State.REPORTED, Report.State.WAITING, Report.State.REFUSED


@dataclass(frozen=True)
class ReceiptState:
    """Where a receipt's report stands."""

    state: str  # "reported", "waiting" or "refused"
    irn: str  # its document's IRN (a refund's own; a sale's, for the sale and its cancellation)
    message: str  # why it is not reported yet, or was refused ("" once reported): NRS's own words
    reports: list[Report]  # its document's report first, then its cancellation's if voided

    @property
    def reported(self) -> bool:
        return self.state == REPORTED


@dataclass(frozen=True)
class Stamp:
    """What a reported receipt shows beside Receco's own code: its IRN and the NRS QR code."""

    irn: str
    qr_payload: str

    def png(self) -> bytes:
        return qr.png(self.qr_payload)

    def svg(self) -> str:
        return qr.svg(self.qr_payload)


@dataclass(frozen=True)
class Counts:
    waiting: int  # not reported yet
    refused: int


def state_of(receipt: Receipt) -> ReceiptState | None:
    """Where ``receipt``'s report to NRS stands; None when it is not reported at all. One query."""
    return states_of([receipt.pk]).get(receipt.pk)


def states_of(receipt_ids: list[int]) -> dict[int, ReceiptState]:
    """The state of each of ``receipt_ids`` that is reported at all, by id: one query (a list page)."""
    found: dict[int, list[Report]] = {}
    for report in Report.objects.filter(receipt_id__in=receipt_ids).order_by("receipt_id", "pk"):
        found.setdefault(report.receipt_id, []).append(report)
    return {receipt_id: _state(reports) for receipt_id, reports in found.items()}


def _state(reports: list[Report]) -> ReceiptState:
    own = next((report for report in reports if report.document != Report.Document.CANCELLATION), reports[0])
    ordered = [own, *(report for report in reports if report is not own)]
    states = {report.state for report in ordered}
    state = REFUSED if REFUSED in states else WAITING if WAITING in states else REPORTED
    message = next((report.message for report in ordered if report.state == state and report.message), "")
    return ReceiptState(state, own.irn, message if state != REPORTED else "", ordered)


def stamp_of(receipt: Receipt) -> Stamp | None:
    """The IRN and NRS QR code payload of ``receipt``'s own document (a sale's invoice, a
    refund's credit note) once NRS has accepted it; None before, and for a receipt not
    reported at all. A voided sale keeps its invoice's stamp. One query."""
    report = (
        Report.objects.filter(receipt=receipt, state=REPORTED)
        .exclude(document=Report.Document.CANCELLATION)
        .only("irn", "qr_payload")
        .first()
    )
    if report is None or not report.qr_payload:
        return None
    return Stamp(report.irn, report.qr_payload)


def counts(merchant: Merchant, since: datetime | None = None) -> Counts:
    """How many of ``merchant``'s reports are not reported yet and how many were refused,
    among those made since ``since`` (Today: the start of the merchant's day), or all. One query."""
    reports = Report.objects.filter(merchant_id=merchant.pk, state__in=[WAITING, REFUSED])
    if since is not None:
        reports = reports.filter(created_at__gte=since)
    totals = reports.aggregate(
        waiting=Count("pk", filter=Q(state=WAITING)), refused=Count("pk", filter=Q(state=REFUSED))
    )
    return Counts(totals["waiting"], totals["refused"])


def refused(receipts: QuerySet) -> QuerySet:
    """Those of ``receipts`` (a Receipt queryset, a merchant's) with a report NRS refused:
    the dashboard's filter."""
    return receipts.filter(Exists(Report.objects.filter(receipt=OuterRef("pk"), state=REFUSED)))


def waiting(receipts: QuerySet) -> QuerySet:
    """Those of ``receipts`` with a report not made yet (and none refused): the dashboard's filter."""
    return receipts.filter(Exists(Report.objects.filter(receipt=OuterRef("pk"), state=WAITING))).exclude(
        Exists(Report.objects.filter(receipt=OuterRef("pk"), state=REFUSED))
    )


def report_data(report: Report) -> dict:
    """A report as the webhooks tell it (docs/webhooks.md): ``{"irn", "document", "state",
    "message", "reported_at"}``."""
    return {
        "irn": report.irn,
        "document": report.document,
        "state": report.state,
        "message": report.message,
        "reported_at": iso_utc(report.reported_at) if report.reported_at else None,
    }


def annex(receipt: Receipt) -> Annex | None:
    """A stamped receipt's e-invoice as the pages, the email and the ORF document show it
    beside the receipt (receipts.annexes): its IRN and the NRS QR code; None before NRS
    accepted it. The ORF document carries it as ``extensions.nrs``, outside what Receco
    signed. A test receipt, never reported, costs no query."""
    if receipt.is_test:
        return None
    stamp = stamp_of(receipt)
    if stamp is None:
        return None
    return Annex(
        name=ORF_EXTENSION,
        label="NRS e-invoice (IRN)",
        reference=stamp.irn,
        caption="Reported to NRS, Nigeria's revenue service. NRS's own app reads this code.",
        qr_payload=stamp.qr_payload,
        qr_title=qr.QR_TITLE,
        extension={"irn": stamp.irn, "qr_code": stamp.qr_payload},
    )
