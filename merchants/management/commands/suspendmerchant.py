from django.core.management.base import BaseCommand

from merchants.management.commands._lookup import merchant_named


class Command(BaseCommand):
    help = (
        "Suspend a merchant: its keys answer 403 and no receipts are accepted for it; customers "
        "still read the receipts they have. --undo reactivates it."
    )

    def add_arguments(self, parser):
        parser.add_argument("merchant", help="the merchant's id (merchant_string_id)")
        parser.add_argument("--undo", action="store_true", help="reactivate the merchant")

    def handle(self, *args, merchant, undo, **options):
        record = merchant_named(merchant)
        changed = record.set_suspended(not undo)
        state = "active" if undo else "suspended"
        self.stdout.write(f"{record.string_id} is {'now' if changed else 'already'} {state}")
