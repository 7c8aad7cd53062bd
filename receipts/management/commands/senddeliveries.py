from django.core.management.base import BaseCommand

from receipts.deliveries import requeue_due


class Command(BaseCommand):
    help = (
        "Queue every receipt delivery that is due: retries whose time has come, and deliveries whose task "
        "was lost. Run it every few minutes (cron) when RECECO_TASKS_BACKEND is immediate; with the "
        "database backend the worker schedules retries itself and this is a safety net."
    )

    def handle(self, *args, **options):
        count = requeue_due()
        self.stdout.write(f"{count} deliveries queued.")
