"""Re-check the whole receipt log against the database and its checkpoints.

    manage.py verifylog                         # the database's own checkpoints
    manage.py verifylog --checkpoint saved.txt  # and checkpoints kept elsewhere (a witness's)

Prints each problem (an edited, deleted, missing or moved receipt; a checkpoint the log no
longer matches) and exits with status 1 when there is one; receipts removed by retention
are counted, not problems. The outcome is kept for /readyz.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS

from ledger.audit import audit, record
from receco.lib.postgresql.base import statement_timeout_lifted


class Command(BaseCommand):
    help = "Re-check the whole receipt log against the database and the published checkpoints."

    def add_arguments(self, parser):
        parser.add_argument(
            "--checkpoint", action="append", default=[], help="a signed checkpoint file to hold the log to (repeatable)"
        )

    def handle(self, *args, checkpoint=(), **options):
        notes = []
        for path in checkpoint:
            try:
                with open(path, encoding="utf-8", newline="") as file:
                    notes.append(file.read())
            except OSError as error:
                raise CommandError(f"Cannot read {path}: {error.strerror}") from None
        # The whole log against the whole table: longer than a request may take.
        with statement_timeout_lifted(DEFAULT_DB_ALIAS):
            report = audit(notes)
        record(report)
        for problem in report.problems:
            self.stdout.write(f"PROBLEM {problem}")
        summary = f"{report.size} entries and {report.checkpoints} checkpoints checked"
        if report.removed:
            summary += f" ({report.removed} of them removed by retention: their leaf hashes checked, not their content)"
        if not report.ok:
            raise CommandError(f"{summary}: {len(report.problems)} problem(s)")
        self.stdout.write(f"OK {summary}: no problem")
