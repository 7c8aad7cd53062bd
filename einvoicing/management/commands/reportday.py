"""Report a day's receipts of a merchant to NRS again: what NRS has not accepted yet."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from einvoicing.models import EInvoicing
from einvoicing.reports import report_day
from merchants.models import Merchant


class Command(BaseCommand):
    help = (
        "Queue again for NRS every sale, refund and void of a merchant issued on a day (in its time zone) "
        "that NRS has not accepted; the worker sends them."
    )

    def add_arguments(self, parser):
        parser.add_argument("merchant", help="the merchant id (string id)")
        parser.add_argument("day", help="the day, YYYY-MM-DD, in the merchant's time zone")

    def handle(self, *args, merchant: str, day: str, **options):
        try:
            shop = Merchant.objects.get(string_id=merchant)
        except Merchant.DoesNotExist:
            raise CommandError(f"No merchant {merchant!r}") from None
        try:
            when = date.fromisoformat(day)
        except ValueError:
            raise CommandError(f"Not a day: {day!r} (write it YYYY-MM-DD)") from None
        try:
            done = report_day(shop, when)
        except EInvoicing.DoesNotExist:
            raise CommandError(f"E-invoicing is off for {merchant}: switch it on in the dashboard first") from None
        self.stdout.write(
            f"{merchant} {when}: {done.queued} queued for NRS, {done.sending} already on their way, "
            f"{done.reported} reported before"
        )
