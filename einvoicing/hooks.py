"""The receipts hook of e-invoicing (receipts.hooks): every live, numbered receipt of a
merchant whose e-invoicing is on is recorded for NRS in the transaction that stores it (a
sale, a refund) or cancels it (a void), with its delivery in the one outbox
(einvoicing.reports). The report itself is the worker's (einvoicing.transport): nothing
waits for NRS on the request path.

Every sale asks whether its merchant reports, so the answer is kept on the Merchant object
itself, as webhooks.listeners keeps a merchant's endpoints: sales get their merchant from
the memory of keys and merchants (merchants.admission.memory), which reads it again
whenever the shared version changes, and saving or deleting e-invoicing settings replaces
that version. A merchant that does not report costs a sale no query.
"""

from __future__ import annotations

from django.db.models.signals import post_delete, post_save

from einvoicing import reports
from einvoicing.models import EInvoicing, Report
from merchants.admission import memory
from merchants.models import Merchant
from receipts import hooks

_ATTRIBUTE = "_receco_einvoicing_service_id"
_DOCUMENT = {
    hooks.CREATED: Report.Document.INVOICE,
    hooks.REFUNDED: Report.Document.CREDIT_NOTE,
    hooks.VOIDED: Report.Document.CANCELLATION,
}


def service_id(merchant: Merchant) -> str | None:
    """The service id of ``merchant``'s e-invoicing when it is on, else None: one query the
    first time per Merchant object, none after."""
    if merchant.pk is None:  # a new test merchant, saved with its first receipt
        return None
    if _ATTRIBUTE not in merchant.__dict__:
        on = EInvoicing.objects.filter(merchant_id=merchant.pk, enabled=True)
        merchant.__dict__[_ATTRIBUTE] = on.values_list("service_id", flat=True).first()
    return merchant.__dict__[_ATTRIBUTE]


class ReportToNRS(hooks.Hook):
    """Records the report of each sale, refund and void of a reporting merchant. Its
    outcome, ``einvoice``, is the IRN of the document reported."""

    name = "einvoice"

    def wants(self, change: hooks.Change) -> bool:
        if change.kind not in _DOCUMENT or not reports.reportable(change.receipt, change.sale):
            return False
        return service_id(change.owner) is not None

    def write(self, change: hooks.Change) -> str:
        merchant = change.owner
        return reports.record(change.receipt, _DOCUMENT[change.kind], merchant, service_id(merchant)).irn


def changed(sender, instance: EInvoicing, **kwargs) -> None:
    """Make every process ask again whether the merchant reports (after its settings changed)."""
    if EInvoicing.merchant.is_cached(instance):  # the caller's own object, which memory does not hold
        instance.merchant.__dict__.pop(_ATTRIBUTE, None)
    memory.changed()


def connect_signals() -> None:
    """EInvoicingConfig.ready: saving or deleting settings is seen by every process."""
    post_save.connect(changed, sender=EInvoicing, dispatch_uid="einvoicing-settings-save")
    post_delete.connect(changed, sender=EInvoicing, dispatch_uid="einvoicing-settings-delete")
