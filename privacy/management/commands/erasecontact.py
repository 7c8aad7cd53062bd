"""Erase a customer's phone number or email address from every receipt, delivery and
webhook body, as the customer can from the receipt locker (docs/privacy.md): for a request
that reaches the operator another way. The number is read as the service reads any
(RECECO_PHONE_REGION for one without its country code).

    manage.py erasecontact +2348031234567
    manage.py erasecontact customer@example.com
"""

from django.core.management.base import BaseCommand, CommandError

from privacy.erasure import erase_contact
from privacy.models import ErasureRecord
from receipts.contacts import normalize_email, normalize_phone


class Command(BaseCommand):
    help = "Erase a customer's phone number or email address from everything the service keeps."

    def add_arguments(self, parser):
        parser.add_argument("contact", help="the phone number or email address")

    def handle(self, *args, contact: str, **options):
        normalize = normalize_email if "@" in contact else normalize_phone
        try:
            normalized = normalize(contact)
        except ValueError as error:
            raise CommandError(f"Not erased: {error}") from None
        erased = erase_contact(normalized.lower(), via=ErasureRecord.Via.OPERATOR)
        summary = ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in erased.counts.items())
        self.stdout.write(f"Erased the {erased.kind}: {summary}")
