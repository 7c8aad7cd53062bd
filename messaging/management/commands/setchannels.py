"""setchannels <merchant> [--sms-sender-id ID|--no-sms-sender-id] [--whatsapp on|off]:
a merchant's own settings of its receipts' channels (messaging.models.ChannelSettings)."""

from django.core.management.base import BaseCommand, CommandError

from merchants.models import Merchant
from messaging import channels
from messaging.models import ChannelSettings
from messaging.providers.config import SENDER_ID_RE


class Command(BaseCommand):
    help = (
        "Set a merchant's SMS sender id (registered with the SMS provider first) and whether its customers "
        "may ask for receipts on WhatsApp; prints the channels it then offers."
    )

    def add_arguments(self, parser):
        parser.add_argument("merchant", help="the merchant's string id")
        sender = parser.add_mutually_exclusive_group()
        sender.add_argument("--sms-sender-id", help="3 to 11 letters, digits or spaces")
        sender.add_argument("--no-sms-sender-id", action="store_true", help="use RECECO_SMS_SENDER again")
        parser.add_argument("--whatsapp", choices=["on", "off"], help="offer WhatsApp (when the service has it)")

    def handle(self, *args, **options):
        merchant = Merchant.objects.filter(string_id=options["merchant"]).first()
        if merchant is None:
            raise CommandError(f"No merchant {options['merchant']!r}")
        own, _ = ChannelSettings.objects.get_or_create(merchant=merchant)
        if options["sms_sender_id"] is not None:
            if not SENDER_ID_RE.fullmatch(options["sms_sender_id"]):
                raise CommandError("--sms-sender-id must be 3 to 11 letters, digits or spaces")
            own.sms_sender_id = options["sms_sender_id"]
        if options["no_sms_sender_id"]:
            own.sms_sender_id = ""
        if options["whatsapp"] is not None:
            own.whatsapp = options["whatsapp"] == "on"
        own.save()
        offered = ", ".join(channels.configured(merchant.pk))
        self.stdout.write(f"{merchant.string_id}: {offered}; texts from {channels.sender_id(merchant.pk)}")
