"""``setupdev``: what ``./dev up`` does before it serves, in one process (each management
command run on its own loads the project again, a second or two a time): the development
signing key when it is missing (``makesigningkey --if-missing``), ``migrate`` when a
migration is unapplied, and the demo data (``seeddemo``, which makes only what is missing
and prints where to look).

    manage.py setupdev
"""

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


class Command(BaseCommand):
    help = (
        "Prepare this machine for ./dev up: the development signing key if missing, migrate if a "
        "migration is unapplied, the demo merchant and receipt if missing."
    )
    # migrate runs them, when it runs; the server runs them as it starts.
    requires_system_checks = []

    def handle(self, *args, **options):
        # First, so that the receipts seeddemo makes are signed and logged.
        call_command("makesigningkey", if_missing=True, stdout=self.stdout)
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            call_command("migrate", interactive=False, stdout=self.stdout)
        call_command("seeddemo", stdout=self.stdout)
