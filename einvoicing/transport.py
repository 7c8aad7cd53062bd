"""The outbox's channel to NRS (messaging.transports): how a report is sent, and what each
attempt leaves on it.

``send`` reports one document with the merchant's credentials (unsealed for the attempt
only): a sale's invoice or a refund's credit note is validated, signed (the official
submission, which NRS answers with its stamp) and confirmed, and its NRS QR code made; a
voided sale's invoice is marked cancelled. A credit note or a cancellation waits for its
sale's invoice to be reported first. An attempt after one that may have signed (its
answer lost) asks NRS first whether it holds the invoice, so that nothing is signed twice.

What NRS refuses, and what cannot be reported as it stands (the shop's legal identity
incomplete, its credentials missing), fails at once and for good: ``refused``, with the
reason. Anything else (no answer, NRS busy or failing, its sale not reported yet) is tried
again after 1, 2, 4 … minutes, at most an hour apart, for RETRY_FOR, well inside the 24
hours NRS allows for reporting a sale to a consumer; then it too is refused. ``recorded``
keeps each attempt's outcome on the report and tells the apps above (einvoicing.signals).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from einvoicing import codes, invoices, mbs, qr, reports, signals, vault
from einvoicing.models import EINVOICE, EInvoicing, Report
from einvoicing.state import report_data
from messaging.models import Delivery
from messaging.transports import Dropped, Failed, Outcome, Retry, Sent, Transport

RETRY_FOR = timedelta(hours=20)
NOT_SET_UP = "E-invoicing is not set up for this shop: its NRS credentials are missing"
NO_URL = "RECECO_EINVOICING_URL is not set: the operator must set it"


class EInvoiceTransport(Transport):
    channel, label = EINVOICE, "NRS e-invoice"
    # NRS is one party: every merchant's reports share its lane (at most two at once per dispatcher).
    lane_per_destination = False

    def retry(self) -> Retry:
        return Retry(timedelta(minutes=1), 2, timedelta(hours=1), within=RETRY_FOR)

    def send(self, delivery: Delivery) -> Sent:
        report = Report.objects.select_related("merchant", "receipt__refund_of").filter(pk=delivery.payload_id).first()
        if report is None:
            raise Dropped("its report no longer exists")  # its receipt was removed (retention)
        try:
            _report(report, again=delivery.attempts > 1)
        except (invoices.Incomplete, qr.BadKeysFile, vault.VaultClosed) as problem:
            raise Failed(str(problem), permanent=True) from None
        except mbs.Refused as refusal:
            raise Failed(str(refusal), permanent=True, status_code=refusal.status) from None
        except mbs.Unavailable as outage:
            raise Failed(str(outage), status_code=outage.status) from None
        return Sent()

    def recorded(self, delivery: Delivery, outcome: Outcome) -> None:
        """The report's new state, and the signal of a report accepted or failed for good."""
        report = Report.objects.select_related("receipt").filter(pk=delivery.payload_id).first()
        if report is None:
            return
        now = timezone.now()
        if outcome.succeeded:
            report.state, report.message, report.reported_at = Report.State.REPORTED, "", now
        elif outcome.status == Delivery.Status.RETRYING:
            report.state, report.message = Report.State.WAITING, outcome.error
        else:
            report.state, report.message = Report.State.REFUSED, outcome.error
        report.message = report.message[: Report._meta.get_field("message").max_length]
        report.save(update_fields=["state", "message", "reported_at", "updated_at"])
        if report.state == Report.State.REPORTED:
            signals.reported.send(sender=Report, receipt=report.receipt, report=report_data(report))
        elif report.state == Report.State.REFUSED:
            signals.report_failed.send(sender=Report, receipt=report.receipt, report=report_data(report))


def _report(report: Report, *, again: bool) -> None:
    """Report ``report``'s document to NRS (``again``: an attempt came before). Raises
    mbs.Refused, mbs.Unavailable, invoices.Incomplete, qr.BadKeysFile or vault.VaultClosed."""
    setup = EInvoicing.objects.filter(merchant_id=report.merchant_id).first()
    if setup is None or not setup.has_credentials:
        raise invoices.Incomplete(NOT_SET_UP)
    if not settings.RECECO_EINVOICING_URL:
        raise mbs.Unavailable(NO_URL)
    credentials = setup.credentials()
    client = mbs.Client(settings.RECECO_EINVOICING_URL, credentials.api_key, credentials.api_secret)
    if report.document == Report.Document.CANCELLATION:
        _sale_reported(report.receipt)
        client.cancel(report.irn)
        return
    sale_report = _sale_reported(report.receipt.refund_of) if report.receipt.refund_of_id else None
    keys = qr.parse_keys(credentials.crypto_keys)  # a file that cannot make the QR code refuses before anything is sent
    if again and client.confirm(report.irn) is not None:
        stamp = report.stamp  # an earlier attempt signed it, and its answer was lost
    else:
        body = _body(client, report, setup, sale_report)
        client.validate(body)
        stamp = client.sign(body)
        if client.confirm(report.irn) is None:
            raise mbs.Unavailable("NRS does not confirm the invoice it signed yet")
    payload = qr.payload(report.irn, keys, timezone.now())
    Report.objects.filter(pk=report.pk).update(stamp=stamp, qr_payload=payload)


def _sale_reported(sale) -> Report:
    """The report of ``sale``'s invoice, which a credit note or a cancellation follows.
    Raises mbs.Unavailable while it is not reported yet, invoices.Incomplete once refused."""
    sale_report = reports.invoice_of(sale)
    if sale_report is None:
        raise invoices.Incomplete("Its sale was never reported: report its day again first")
    if sale_report.state == Report.State.REFUSED:
        raise invoices.Incomplete(f"NRS refused its sale's invoice {sale_report.irn}: report its day again first")
    if sale_report.state != Report.State.REPORTED:
        raise mbs.Unavailable(f"Waiting for its sale's invoice {sale_report.irn} to be reported")
    return sale_report


def _body(client: mbs.Client, report: Report, setup: EInvoicing, sale_report: Report | None) -> dict:
    merchant = report.merchant
    supplier = invoices.supplier(merchant, setup)
    invoice = invoices.invoice(report, report.receipt, merchant.time_zone, sale_report)
    return mbs.invoice_body(
        invoice,
        business_id=setup.business_id,
        type_code=codes.invoice_type(client, credit_note=invoice.credit_note),
        supplier=supplier,
        payment_means=codes.payment_means(client, invoice.payment_method),
        tax_categories=[codes.tax_category(client, tax.name, tax.rate) for tax in invoice.taxes],
    )
