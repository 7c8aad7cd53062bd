from django.core.management.base import BaseCommand, CommandError

from merchants.keys import DEFAULT_GRACE, KeyStateError, parse_grace, rotate_key
from merchants.management.commands._lookup import key_named


class Command(BaseCommand):
    help = (
        "Replace an API key with a new one of the same merchant, type and name. The old key keeps "
        "working for the grace period, then expires. The new key is printed once, on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("key", help="the full key or its prefix, e.g. poslive_3kTq9ZxW1bNa")
        parser.add_argument("--grace", default="24h", help="how long the old key keeps working: 24h, 30m, 2d, 0")

    def handle(self, *args, key, grace, **options):
        try:
            period = parse_grace(grace) if grace else DEFAULT_GRACE
        except ValueError as exc:
            raise CommandError(f"--{exc}") from None
        old = key_named(key)
        try:
            issued = rotate_key(old, period)
        except KeyStateError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(
            f"Rotated {old.prefix} of {old.merchant.string_id}: it stops working at "
            f"{old.expires_at:%Y-%m-%d %H:%M:%S} UTC. New key {issued.api_key.prefix}; "
            "store it now: it cannot be shown again."
        )
        self.stdout.write(issued.key)
