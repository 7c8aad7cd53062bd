from django.core.management.base import BaseCommand

from merchants.keys import revoke_key
from merchants.management.commands._lookup import key_named


class Command(BaseCommand):
    help = "Revoke an API key at once and for good (it cannot be re-enabled)."

    def add_arguments(self, parser):
        parser.add_argument("key", help="the full key or its prefix, e.g. poslive_3kTq9ZxW1bNa")

    def handle(self, *args, key, **options):
        api_key = key_named(key)
        if revoke_key(api_key):
            self.stdout.write(f"Revoked {api_key.prefix} of {api_key.merchant.string_id}")
        else:
            self.stdout.write(f"{api_key.prefix} of {api_key.merchant.string_id} was already revoked")
