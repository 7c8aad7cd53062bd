from django.core.management.base import BaseCommand

from merchants.usage import flush_usage


class Command(BaseCommand):
    help = (
        "Move the API call counters from the shared cache into the daily usage table. "
        "Run it every few minutes (cron, a systemd timer or a scheduled job); counters "
        "wait in the cache for up to 7 days."
    )

    def handle(self, *args, **options):
        self.stdout.write(f"Flushed {flush_usage()} API calls into the usage table")
