from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from merchants.management.commands._lookup import merchant_named
from webhooks.endpoints import create_endpoint
from webhooks.models import EventType


class Command(BaseCommand):
    help = (
        "Add a webhook endpoint to a merchant. Its signing secret is printed once, alone on the last line: "
        "it cannot be shown again (roll it in the admin to get a new one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("merchant", help="the merchant's id (merchant_string_id)")
        parser.add_argument("url", help="where events are POSTed: https://…")
        parser.add_argument(
            "--events", default="", help=f"comma-separated event types (default: all): {', '.join(EventType.values)}"
        )
        parser.add_argument("--description", default="", help="what receives the events, e.g. 'Accounting'")

    def handle(self, *args, merchant, url, events, description, **options):
        types = [name.strip() for name in events.split(",") if name.strip()]
        try:
            endpoint = create_endpoint(merchant_named(merchant), url, types, description)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stderr.write(
            f"Created webhook endpoint {endpoint.pk} for {merchant}: {url} "
            f"({', '.join(endpoint.event_types) or 'all events'}). Give your receiver this signing secret now: "
            "it cannot be shown again."
        )
        self.stdout.write(endpoint.secret)
