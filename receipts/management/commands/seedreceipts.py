import random
import time
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from merchants.models import Merchant
from receipts import writer
from receipts.codes import BASE36, SHORT_CODE_ALPHABET, base36
from receipts.models import Receipt
from receipts.validation import sale_fingerprint

_CATALOGUE = [
    ("Jollof rice (plate)", 250000),
    ("Fried plantain", 80000),
    ("Suya (100 g)", 150000),
    ("Chapman", 120000),
    ("Bottled water 75cl", 30000),
    ("Peak milk 400 g", 310000),
    ("Indomie noodles (carton)", 1150000),
    ("Golden Penny semovita 1 kg", 180000),
    ("Dangote sugar 500 g", 95000),
    ("Palm oil 1 L", 220000),
    ("Bread (sliced)", 120000),
    ("Malt drink 33cl", 50000),
    ("Phone top-up", 100000),
    ("Ankara fabric (yard)", 350000),
]
_PAYMENT_METHODS = ["card", "card", "card", "cash", "transfer", "ussd"]
_LOCATIONS = ["Lekki Phase 1", "Ikeja City Mall", "Wuse 2, Abuja", "Yaba", "Victoria Island"]


class Command(BaseCommand):
    help = "Bulk-create realistic test receipts for a merchant (demos and benchmarks)."

    def add_arguments(self, parser):
        parser.add_argument("string_id", help="merchant id")
        parser.add_argument("count", type=int, help="how many receipts to create")
        parser.add_argument("--batch-size", type=int, default=5000)
        parser.add_argument("--days", type=int, default=90, help="spread sales over this many past days")

    def handle(self, *args, string_id, count, batch_size, days, **options):
        if count < 1:
            raise CommandError("count must be at least 1")
        try:
            merchant = Merchant.objects.get(string_id=string_id)
        except Merchant.DoesNotExist:
            raise CommandError(f"No merchant {string_id!r}: create it with createmerchant first") from None
        rng = random.Random()  # noqa: S311  (demo data, not secrets)
        started = time.monotonic()
        created = 0
        while created < count:
            size = min(batch_size, count - created)
            sales = [self._sale(merchant, rng, days) for _ in range(size)]
            receipts = [self._receipt(merchant, sale, rng) for sale in sales]
            self._replace_taken_codes(receipts, rng)
            for sale, receipt in zip(sales, receipts, strict=True):
                receipt.fingerprint = sale_fingerprint({**sale, "token": receipt.token})
            writer.insert_seeded(receipts)
            created += size
            self.stdout.write(f"{created}/{count} receipts", ending="\r")
        elapsed = time.monotonic() - started
        self.stdout.write(f"Created {count} receipts for {merchant.string_id} in {elapsed:.1f} s")

    def _sale(self, merchant: Merchant, rng: random.Random, days: int) -> dict:
        when = timezone.now() - timedelta(seconds=rng.randrange(days * 86400))
        items = []
        for name, price in rng.sample(_CATALOGUE, rng.randint(1, 5)):
            quantity = rng.randint(1, 4)
            items.append({"name": name, "quantity": quantity, "unit_price": price, "total_price": price * quantity})
        return {
            "token": f"rcpt_{base36(int(when.timestamp() * 1000))}_{_random(rng, BASE36, 6)}",
            "merchant_string_id": merchant.string_id,
            "merchant_name": merchant.name,
            "total_amount": sum(item["total_price"] for item in items),
            "currency": "NGN",
            "transaction_date": when,
            "items": items,
            "category": "retail",
            "payment_method": rng.choice(_PAYMENT_METHODS),
            "location": rng.choice(_LOCATIONS),
            "status": "completed",
        }

    def _receipt(self, merchant: Merchant, sale: dict, rng: random.Random) -> Receipt:
        return Receipt(
            short_code=_random(rng, SHORT_CODE_ALPHABET, 6),
            merchant=merchant,
            merchant_logo=merchant.logo_url or None,
            accent_color=merchant.accent_color,
            livemode=not merchant.is_test,
            **{key: value for key, value in sale.items() if key != "merchant_string_id"},
        )

    def _replace_taken_codes(self, receipts: list[Receipt], rng: random.Random) -> None:
        """Give each receipt a short code and token unused in the batch and the database."""
        for field, alphabet in (("short_code", SHORT_CODE_ALPHABET), ("token", BASE36)):
            while True:
                values = [getattr(receipt, field) for receipt in receipts]
                taken = set(Receipt.objects.filter(**{f"{field}__in": values}).values_list(field, flat=True))
                seen = set()
                clashes = 0
                for receipt in receipts:
                    value = getattr(receipt, field)
                    if value in taken or value in seen:
                        clashes += 1
                        if field == "short_code":
                            receipt.short_code = _random(rng, alphabet, 6)
                        else:
                            receipt.token = f"{receipt.token[:-6]}{_random(rng, alphabet, 6)}"
                    seen.add(getattr(receipt, field))
                if not clashes:
                    break


def _random(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choices(alphabet, k=length))
