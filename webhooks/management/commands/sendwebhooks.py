from django.core.management.base import BaseCommand

from webhooks.outbox import requeue_due


class Command(BaseCommand):
    help = (
        "Queue every webhook delivery that is due: retries whose time has come, and deliveries whose task was "
        "lost (a crash, a killed worker). Run it every few minutes (cron), like senddeliveries: with "
        "RECECO_TASKS_BACKEND=immediate it is what sends retries; with the database backend it is a safety net."
    )

    def handle(self, *args, **options):
        count = requeue_due()
        self.stdout.write(f"{count} webhook deliveries queued.")
