"""What e-invoicing tells the apps above it (webhooks connects them in its ``ready()``).

Both are sent in the transaction that records the report's new state, so what a receiver
writes is kept only with it, with ``receipt`` (the receipt the document is of: the sale
for its invoice and its cancellation, the refund for its credit note) and ``report`` (the
report as data: einvoicing.state.report_data)."""

from django.dispatch import Signal

# NRS accepted a report: it signed an invoice or a credit note, or cancelled an invoice.
reported = Signal()
# A report failed for good: NRS refused it, or it could not be sent within the time allowed.
report_failed = Signal()
