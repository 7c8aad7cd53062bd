import argparse

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from merchants.colors import HOUSE_ACCENT_COLOR, normalize_accent_color
from merchants.models import DEFAULT_COUNTRY, DEFAULT_TIME_ZONE, TEST_MERCHANT_PREFIX, Merchant


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
        identity = parser.add_argument_group("legal identity, shown on every receipt")
        identity.add_argument("--legal-name", default="", help="as registered, e.g. 'Mama Put Foods Ltd'")
        identity.add_argument("--address", default="", help="postal address (\\n for a new line)")
        identity.add_argument("--phone", default="", help="a number customers may call")
        identity.add_argument("--support-email", default="", help="where replies to receipt emails go")
        identity.add_argument("--tax-id", default="", metavar="SCHEME:VALUE", help="e.g. NG_TIN:12345678-0001")
        identity.add_argument(
            "--registration-number", default="", metavar="RC1234567", help="CAC number: RC, BN or IT and its digits"
        )
        identity.add_argument("--country", default=DEFAULT_COUNTRY, help="two-letter country code (default NG)")
        identity.add_argument("--time-zone", default=DEFAULT_TIME_ZONE, help="e.g. Africa/Lagos (the default)")
        identity.add_argument("--return-policy", default="", help="printed on every receipt")
        identity.add_argument("--receipt-footer", default="", help="a line at the foot of every receipt")

    def handle(self, *args, string_id, name, logo, accent_color, require_api_key, test, tax_id, **options):
        try:
            color = normalize_accent_color(accent_color)
        except ValueError as exc:
            raise CommandError(f"--accent-color {exc}") from None
        scheme, _, value = tax_id.rpartition(":")
        if tax_id and not (scheme and value):
            raise CommandError("--tax-id must be SCHEME:VALUE, e.g. NG_TIN:12345678-0001")
        merchant = Merchant(
            string_id=string_id,
            name=name,
            logo_url=logo,
            accent_color=color,
            legal_name=options["legal_name"],
            address=options["address"].replace("\\n", "\n"),
            phone=options["phone"],
            support_email=options["support_email"],
            tax_id_scheme=scheme,
            tax_id=value,
            registration_number=options["registration_number"],
            country=options["country"].upper(),
            time_zone=options["time_zone"],
            return_policy=options["return_policy"],
            receipt_footer=options["receipt_footer"],
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
