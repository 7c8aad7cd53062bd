from django.core.management.base import BaseCommand

from messaging.outbox import sweep


class Command(BaseCommand):
    help = (
        "Sweep the outbox (email, SMS and webhook deliveries): make the retries whose time has come and the "
        "deliveries whose wake-up was lost claimable, record a delivery whose sender stopped mid-send as a "
        "failed attempt, and wake the dispatcher. Run it every few minutes (cron): with the database task "
        "backend it is a safety net; with the immediate one (development) it is what sends retries."
    )

    def handle(self, *args, **options):
        count = sweep()
        self.stdout.write(f"{count} deliveries queued.")
