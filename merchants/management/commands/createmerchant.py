import argparse

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from merchants.colors import HOUSE_ACCENT_COLOR, normalize_accent_color
from merchants.models import TEST_MERCHANT_PREFIX, Merchant


class Command(BaseCommand):
    help = "Create a merchant that POS systems can send receipts for."

    def add_arguments(self, parser):
        parser.add_argument("string_id", help="the id POS systems send as merchant_string_id")
        parser.add_argument("--name", required=True, help="display name on receipts")
        parser.add_argument("--logo", default="", help="http(s) URL of the logo")
        parser.add_argument("--accent-color", default=HOUSE_ACCENT_COLOR, help="#rrggbb or #rgb")
        parser.add_argument(
            "--require-api-key",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="only requests with this merchant's API key may create its receipts (the default); "
            "--no-require-api-key lets its POS call without a key",
        )
        parser.add_argument("--test", action="store_true", help="every receipt of this merchant is a test receipt")

    def handle(self, *args, string_id, name, logo, accent_color, require_api_key, test, **options):
        try:
            color = normalize_accent_color(accent_color)
        except ValueError as exc:
            raise CommandError(f"--accent-color {exc}") from None
        merchant = Merchant(
            string_id=string_id,
            name=name,
            logo_url=logo,
            accent_color=color,
            # A test- merchant is anyone's to use, as when a sale creates one.
            require_api_key=require_api_key and not string_id.startswith(TEST_MERCHANT_PREFIX),
            is_test=test or string_id.startswith(TEST_MERCHANT_PREFIX),
        )
        try:
            merchant.full_clean()
        except ValidationError as exc:
            problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
            raise CommandError(problems) from None
        merchant.save()
        self.stdout.write(f"Created merchant {merchant.string_id} ({merchant.name}), id {merchant.pk}")
