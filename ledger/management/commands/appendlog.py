"""Append committed receipts to the log, in batches, and publish signed checkpoints.

    manage.py appendlog            # loop: append, publish, sleep --interval when caught up
    manage.py appendlog --once     # one pass until caught up (cron, tests)

Run one (a second one waits on the first's lock, harmlessly). Refuses to run without a
signing key.
"""

import time

from django.core.management.base import BaseCommand, CommandError

from ledger.appender import BATCH, SigningOff, append_batch


class Command(BaseCommand):
    help = "Append committed receipts to the receipt log and publish signed checkpoints."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="append until caught up, then stop")
        parser.add_argument("--batch", type=int, default=BATCH, help=f"entries a transaction (default {BATCH})")
        parser.add_argument("--interval", type=float, default=1.0, help="seconds to sleep when caught up")

    def handle(self, *args, once=False, batch=BATCH, interval=1.0, **options):
        if batch < 1:
            raise CommandError("--batch must be at least 1")
        while True:
            try:
                while True:
                    result = append_batch(batch)
                    if result.count or result.checkpoint:
                        published = f", checkpoint at {result.checkpoint.size}" if result.checkpoint else ""
                        self.stdout.write(f"Appended {result.count}: the log holds {result.size}{published}")
                    if result.count < batch:
                        break
            except SigningOff as error:
                raise CommandError(f"Signing is {error}: nothing can be appended") from None
            if once:
                return
            time.sleep(interval)
