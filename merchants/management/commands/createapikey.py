from django.core.management.base import BaseCommand

from merchants.keys import issue_key
from merchants.management.commands._lookup import merchant_for_key


class Command(BaseCommand):
    help = "Make an API key for a merchant. The key is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument(
            "merchant", help="the merchant's id (merchant_string_id); an unknown test- merchant is created"
        )
        parser.add_argument(
            "--type",
            default="test",
            choices=["test", "live"],
            help="test (the default) makes test receipts, never sent nor logged; live makes real ones",
        )
        parser.add_argument("--name", default="", help="what will use the key, e.g. 'Till 3'")

    def handle(self, *args, merchant, type, name, **options):
        issued = issue_key(merchant_for_key(merchant), type, name.strip()[:100])
        self.stderr.write(
            f"Created {type} key {issued.api_key.prefix} for {merchant}. "
            "Store it now (for example in the POS's environment): it cannot be shown again."
        )
        self.stdout.write(issued.key)
