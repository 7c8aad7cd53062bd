"""Remove what is past retention: customers' contacts after RECECO_CONTACT_RETENTION_DAYS,
receipts after RECECO_RECEIPT_RETENTION_YEARS, and what the apps registered (the locker's
expired sign-ins and session keys; docs/privacy.md). Run it once a day (the compose
scheduler does); a second run the same day finds nothing to do.

    manage.py applyretention
"""

from django.core.management.base import BaseCommand

from privacy import retention


class Command(BaseCommand):
    help = (
        "Remove customers' contacts and receipts that are past their retention, and the locker's expired"
        " sign-ins (docs/privacy.md)."
    )

    def handle(self, *args, **options):
        erased = retention.apply()
        counts = erased.counts
        purged = "".join(f"; {counts[name]} {purge.says}" for name, purge in retention.purges().items())
        self.stdout.write(
            f"{counts['receipts_removed']} receipts removed; contacts removed from {counts['receipts']} receipts, "
            f"{counts['deliveries']} deliveries and {counts['webhook_events']} webhook events{purged}"
        )
