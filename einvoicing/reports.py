"""Recording what is to be reported: a Report of each document and its delivery in the one
outbox (messaging.outbox), in the transaction of the change it reports (einvoicing.hooks)
or of ``report_day``, which queues a day's receipts again.

Each document has its IRN (Invoice Reference Number), which the taxpayer's system makes as
NRS prescribes: ``{invoice number}-{service id}-{YYYYMMDD}``. The invoice number is the
receipt's number without its dashes (an IRN's invoice number is letters and digits only):
``MP-2026-000123`` of a sale issued on 22 November 2026 by a business whose service id is
94ND90NR reports as ``MP2026000123-94ND90NR-20261122``. A cancellation names its sale's IRN.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db import transaction
from django.db.models import Q

from einvoicing.invoices import issued
from einvoicing.models import EINVOICE, EInvoicing, Report
from merchants.models import Merchant
from messaging import outbox
from messaging.models import Delivery
from receipts.models import Receipt

VOIDED = "voided"  # receipts.refunds' status of a cancelled sale


def reportable(receipt: Receipt, sale: Receipt | None = None) -> bool:
    """Whether ``receipt`` can be reported: a live receipt with a number (its series known:
    a new sale's number is drawn as it is stored), and a refund's sale numbered too
    (``sale``: the refund's, when the caller holds it). Receipts stored before receipts were
    numbered have no IRN."""
    if not receipt.livemode or receipt.number_series is None:
        return False
    if receipt.refund_of_id:
        return (sale or receipt.refund_of).number_series is not None
    return True


def irn(receipt: Receipt, service_id: str, zone: str) -> str:
    """The IRN of ``receipt`` (numbered) for the business of ``service_id``, its date in
    the merchant's time zone ``zone``."""
    number = receipt.receipt_number.replace("-", "")
    return f"{number}-{service_id}-{issued(receipt, zone):%Y%m%d}"


def record(receipt: Receipt, document: str, merchant: Merchant, service_id: str) -> Report:
    """Make the Report of ``receipt``'s ``document`` (Report.Document), which it has not
    got yet, waiting, with its delivery in the outbox, in the transaction in progress; a
    cancellation (of a sale) or a credit note (of a refund) first makes sure its sale's
    invoice is reported too. Returns it."""
    if document == Report.Document.CANCELLATION:
        number = _invoice(receipt, merchant, service_id).irn
    else:
        if document == Report.Document.CREDIT_NOTE:
            _invoice(receipt.refund_of, merchant, service_id)
        number = irn(receipt, service_id, merchant.time_zone)
    report = Report.objects.create(merchant_id=merchant.pk, receipt=receipt, document=document, irn=number)
    outbox.add(EINVOICE, merchant.pk, number, payload_id=report.pk)
    return report


def _invoice(sale: Receipt, merchant: Merchant, service_id: str) -> Report:
    """The report of ``sale``'s invoice, made (and queued) if it has none: a sale made
    before its merchant reported, refunded or voided since."""
    number = irn(sale, service_id, merchant.time_zone)
    report, made = Report.objects.get_or_create(
        receipt=sale, document=Report.Document.INVOICE, defaults={"merchant_id": merchant.pk, "irn": number}
    )
    if made:
        outbox.add(EINVOICE, merchant.pk, number, payload_id=report.pk)
    return report


def invoice_of(sale: Receipt) -> Report | None:
    """The report of ``sale``'s invoice, if it has one."""
    return Report.objects.filter(receipt=sale, document=Report.Document.INVOICE).first()


@dataclass(frozen=True)
class Requeued:
    reported: int  # already reported: left alone
    queued: int  # not reported: sent again
    sending: int  # not reported, and already on its way


def report_day(merchant: Merchant, day: date) -> Requeued:
    """Queue again every document of ``merchant``'s live receipts issued on ``day`` (in
    its time zone) that NRS has not accepted: sales and refunds, and the cancellation of
    each voided sale. A report that is already on its way is left to it. Raises
    EInvoicing.DoesNotExist when the merchant's e-invoicing is not on."""
    service_id = EInvoicing.objects.get(merchant=merchant, enabled=True).service_id
    zone = zoneinfo.ZoneInfo(merchant.time_zone)
    start = datetime.combine(day, time(), zone)
    receipts = Receipt.objects.filter(
        merchant=merchant,
        livemode=True,
        number__isnull=False,
        transaction_date__gte=start,
        transaction_date__lt=start + timedelta(days=1),
    ).select_related("refund_of")
    reported = queued = sending = 0
    with transaction.atomic():
        for receipt in receipts.order_by("transaction_date", "pk"):
            if not reportable(receipt):
                continue
            documents = [Report.Document.CREDIT_NOTE] if receipt.refund_of_id else [Report.Document.INVOICE]
            if receipt.status == VOIDED:
                documents.append(Report.Document.CANCELLATION)
            for document in documents:
                existing = Report.objects.filter(receipt=receipt, document=document).first()
                if existing is None:
                    record(receipt, document, merchant, service_id)
                outcome = "queued" if existing is None else _again(existing)
                reported += outcome == "reported"
                queued += outcome == "queued"
                sending += outcome == "sending"
    return Requeued(reported, queued, sending)


def _again(report: Report) -> str:
    """Send ``report`` again unless NRS accepted it or its delivery is on its way; say which."""
    if report.state == Report.State.REPORTED:
        return "reported"
    open_ = Q(status__in=[Delivery.Status.PENDING, Delivery.Status.SENDING, Delivery.Status.RETRYING])
    if Delivery.objects.filter(open_, channel=EINVOICE, payload_id=report.pk).exists():
        return "sending"
    Report.objects.filter(pk=report.pk).update(state=Report.State.WAITING, message="")
    outbox.add(EINVOICE, report.merchant_id, report.irn, payload_id=report.pk)
    return "queued"


def delete_of_receipts(receipt_ids: list[int]) -> int:
    """Delete the reports of the receipts ``receipt_ids`` and their deliveries in the outbox
    (retention: a receipt's reports go with it); return how many reports went."""
    reports = Report.objects.filter(receipt_id__in=receipt_ids)
    Delivery.objects.filter(channel=EINVOICE, payload_id__in=reports.values("pk")).delete()
    return reports.delete()[0]
