"""Retention: what the service keeps, for how long (docs/privacy.md), applied by the
``applyretention`` command or the ``apply_retention`` task, once a day.

- A receipt's customer email and phone number go RECECO_CONTACT_RETENTION_DAYS after the
  receipt's last change (its sale, or a contact given later), and with them the
  destinations of the deliveries and the contacts in the webhook bodies made before then.
- A receipt goes RECECO_RECEIPT_RETENTION_YEARS after it was issued: a sale with its
  refunds, voids, deliveries, webhook events and reports to NRS, once the youngest of the sale and its
  refunds is that old. The receipt log keeps its leaf hash, and a RemovedReceipt says it
  was retention that removed it, which ``verifylog`` reports as such.
- What an app above keeps only for a while and registers here (``register``): the
  receipt locker's expired sign-ins, each with the contact it was asked for, and the
  session keys no session can use any more. Each is also deleted on the way by the next
  sign-in, but a quiet service may see none for weeks.

Work goes in batches of BATCH ids, each its own statement or transaction, so that no
statement runs into DATABASE_STATEMENT_TIMEOUT and a run stopped half-way keeps what it
did; what is already gone is not found again, so a second run finds nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, Max, OuterRef, QuerySet
from django.utils import timezone

from einvoicing import reports as einvoicing_reports
from messaging import erasure as outbox
from messaging.models import Delivery
from privacy.erasure import Erased, record
from privacy.models import ErasureRecord
from receipts import writer
from receipts.models import Receipt
from webhooks import erasure as events

BATCH = 5_000


@dataclass(frozen=True)
class Purge:
    """What an app above deletes once it is past its time: ``run(now)`` deletes it and
    says how many rows went; ``says`` names them in the command's words."""

    run: Callable[[datetime], int]
    says: str


_PURGES: dict[str, Purge] = {}


def register(name: str, run: Callable[[datetime], int], says: str) -> None:
    """Have every run of retention run ``run`` too, its count kept under ``name`` (an app's
    ``ready()``); one registered under the same name before is replaced."""
    _PURGES[name] = Purge(run, says)


def purges() -> dict[str, Purge]:
    """The registered purges, by the name their counts are kept under."""
    return dict(_PURGES)


def contacts_cutoff(now: datetime) -> datetime:
    """Contacts on receipts last changed before this moment are removed."""
    return now - timedelta(days=settings.RECECO_CONTACT_RETENTION_DAYS)


def receipts_cutoff(now: datetime) -> datetime:
    """Receipts issued before this moment are removed: as many calendar years before
    ``now`` (29 February counts back to the 28th)."""
    years = settings.RECECO_RECEIPT_RETENTION_YEARS
    try:
        return now.replace(year=now.year - years)
    except ValueError:
        return now.replace(year=now.year - years, day=28)


def apply(now: datetime | None = None) -> Erased:
    """Remove what is past retention at ``now``; return how many rows of each kind
    ("receipts_removed"; "receipts", "deliveries", "webhook_events" whose contact was
    removed; and each registered purge's), kept in an ErasureRecord when there were any."""
    now = now or timezone.now()
    counts = {"receipts_removed": 0, "receipts": 0, "deliveries": 0, "webhook_events": 0}
    before = receipts_cutoff(now)
    for sale_ids in _expired_sales(before):
        purchase = sale_ids + list(Receipt.objects.filter(refund_of_id__in=sale_ids).values_list("pk", flat=True))
        events.delete_of_receipts(purchase)
        einvoicing_reports.delete_of_receipts(purchase)
        counts["receipts_removed"] += writer.remove(sale_ids)
    before = contacts_cutoff(now)
    for receipts in _in_ranges(Receipt.objects.filter(updated_at__lt=before), Receipt):
        counts["receipts"] += writer.forget_contacts(receipts)
    for deliveries in _in_ranges(outbox.made_before(before), Delivery):
        counts["deliveries"] += outbox.forget(deliveries)
    counts["webhook_events"] = events.made_before(before)
    for name, purge in _PURGES.items():
        counts[name] = purge.run(now)
    if not any(counts.values()):
        return Erased(ErasureRecord.Kind.ANY, counts)
    return record(ErasureRecord.Via.RETENTION, ErasureRecord.Kind.ANY, counts)


def _in_ranges(rows: QuerySet, model) -> Iterator[QuerySet]:
    """``rows`` cut into consecutive ranges of BATCH ids of ``model``."""
    last = model.objects.aggregate(last=Max("pk"))["last"] or 0
    for start in range(0, last, BATCH):
        yield rows.filter(pk__gt=start, pk__lte=start + BATCH)


def _expired_sales(before: datetime) -> Iterator[list[int]]:
    """The ids of the sales issued before ``before`` none of whose refunds was issued
    since, a range of ids at a time."""
    younger_refund = Receipt.objects.filter(refund_of_id=OuterRef("pk"), created_at__gte=before)
    sales = Receipt.objects.filter(refund_of__isnull=True, created_at__lt=before).exclude(Exists(younger_refund))
    for batch in _in_ranges(sales, Receipt):
        ids = list(batch.values_list("pk", flat=True))
        if ids:
            yield ids
