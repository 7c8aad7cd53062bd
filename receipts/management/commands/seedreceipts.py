import random
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connections, router, transaction
from django.db.models import F
from django.utils import timezone

from merchants.models import Merchant
from receco.lib.postgresql.base import statement_timeout_lifted
from receipts import seed_writer, seeding
from receipts.codes import BASE36, SHORT_CODE_ALPHABET, base36
from receipts.models import Receipt, ReceiptSeries
from receipts.numbering import series_name
from receipts.validation import sale_fingerprint


class Command(BaseCommand):
    help = (
        "Bulk-create realistic test receipts for a merchant, or spread over it and more merchants"
        " (demos and benchmarks). On PostgreSQL the database makes them: ten million in minutes."
    )

    def add_arguments(self, parser):
        parser.add_argument("string_id", help="merchant id")
        parser.add_argument("count", type=int, help="how many receipts to create")
        parser.add_argument(
            "--merchants",
            type=int,
            default=1,
            help="spread the receipts evenly over this many merchants: the one named and <string_id>-0002 and on,"
            " created (like it: test or live) when missing",
        )
        parser.add_argument("--batch-size", type=int, default=5000, help="receipts stored at once (not PostgreSQL)")
        parser.add_argument("--days", type=int, default=90, help="spread sales over this many past days")

    def handle(self, *args, string_id, count, merchants, batch_size, days, **options):
        if count < 1:
            raise CommandError("count must be at least 1")
        if not 1 <= merchants <= count:
            raise CommandError("--merchants must be between 1 and count")
        try:
            merchant = Merchant.objects.get(string_id=string_id)
        except Merchant.DoesNotExist:
            raise CommandError(f"No merchant {string_id!r}: create it with createmerchant first") from None
        rng = random.Random()  # noqa: S311  (demo data, not secrets)
        started = time.monotonic()
        shares = list(zip(_merchants(merchant, merchants), _split(count, merchants), strict=True))
        start, end = seeding.spread(days, timezone.now())
        using = router.db_for_write(Receipt)
        if connections[using].vendor == "postgresql":
            with statement_timeout_lifted(using):
                phases = seed_writer.insert_generated(shares, start, end, rng)
            if options["verbosity"] > 1:
                for name, seconds in phases.items():
                    self.stdout.write(f"  {seconds:7.1f} s  {name}")
        else:
            for owner, share in shares:
                self._seed_in_batches(owner, share, batch_size, start, end, rng)
        elapsed = time.monotonic() - started
        over = f" and {merchants - 1} more merchants" if merchants > 1 else ""
        self.stdout.write(f"Created {count} receipts for {merchant.string_id}{over} in {elapsed:.1f} s")

    def _seed_in_batches(self, merchant, count, batch_size, start, end, rng) -> None:
        created = 0
        while created < count:
            size = min(batch_size, count - created)
            receipts = []
            for _ in range(size):
                stored = start + (end - start) * rng.random()
                receipts.append(self._receipt(merchant, self._sale(merchant, rng, stored), stored, rng))
            self._replace_taken_codes(receipts, rng)
            with transaction.atomic():
                _number(merchant, receipts)
                seed_writer.insert_seeded(receipts)
            created += size
            self.stdout.write(f"{created}/{count} receipts", ending="\r")

    def _sale(self, merchant: Merchant, rng: random.Random, stored) -> dict:
        when = stored - seeding.timedelta(seconds=rng.random() * seeding.UPLOAD_DELAY)
        payment_method = rng.choice(seeding.PAYMENT_METHODS)
        made = seeding.basket(rng)
        sale = {
            "token": f"rcpt_{base36(int(when.timestamp() * 1000))}_{_random(rng, BASE36, 6)}",
            "merchant_string_id": merchant.string_id,
            "merchant_name": merchant.name,
            "total_amount": made["total_amount"],
            "currency": "NGN",
            "transaction_date": when,
            "items": made["items"],
            "category": "retail",
            "payment_method": payment_method,
            "location": rng.choice(seeding.LOCATIONS),
            "status": "completed",
            **seeding.extras(rng, payment_method),
        }
        if made["tax_lines"]:
            sale["tax_lines"] = made["tax_lines"]
        return {key: value for key, value in sale.items() if value is not None or key.startswith("customer_")}

    def _receipt(self, merchant: Merchant, sale: dict, stored, rng: random.Random) -> Receipt:
        details = {name: sale[name] for name in ("tax_lines", "payment_details") if name in sale}
        receipt = Receipt(
            short_code=_random(rng, seeding.LETTERS, 1) + _random(rng, SHORT_CODE_ALPHABET, 5),
            merchant=merchant,
            merchant_logo=merchant.logo_url or None,
            accent_color=merchant.accent_color or seeding.HOUSE_ACCENT_COLOR,
            livemode=not merchant.is_test,
            details=details or None,
            number_series=series_name(merchant, livemode=not merchant.is_test, now=stored),
            created_at=stored,
            updated_at=stored,
            **{key: value for key, value in sale.items() if key not in ("merchant_string_id", *details)},
        )
        receipt.sale = sale
        return receipt

    def _replace_taken_codes(self, receipts: list[Receipt], rng: random.Random) -> None:
        """Give each receipt a short code and token unused in the batch and the database."""
        for field in ("short_code", "token"):
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
                            receipt.short_code = receipt.short_code[0] + _random(rng, SHORT_CODE_ALPHABET, 5)
                        else:
                            receipt.token = f"{receipt.token[:-6]}{_random(rng, BASE36, 6)}"
                    seen.add(getattr(receipt, field))
                if not clashes:
                    break
        for receipt in receipts:
            receipt.fingerprint = sale_fingerprint({**receipt.sale, "token": receipt.token})


def _merchants(first: Merchant, count: int) -> list[Merchant]:
    """``first`` and ``count - 1`` more like it, <string_id>-0002 and on, created when missing."""
    names = [f"{first.string_id}-{index:04d}" for index in range(2, count + 1)]
    found = {merchant.string_id: merchant for merchant in Merchant.objects.filter(string_id__in=names)}
    missing = [
        Merchant(
            string_id=name,
            name=f"{first.name} {name.rsplit('-', 1)[1]}",
            is_test=first.is_test,
            require_api_key=first.require_api_key,
        )
        for name in names
        if name not in found
    ]
    for merchant in Merchant.objects.bulk_create(missing):
        found[merchant.string_id] = merchant
    return [first, *(found[name] for name in names)]


def _split(count: int, parts: int) -> list[int]:
    """``count`` in ``parts`` shares as even as can be, the larger first."""
    share, rest = divmod(count, parts)
    return [share + (index < rest) for index in range(parts)]


def _number(merchant: Merchant, receipts: list[Receipt]) -> None:
    """Number ``receipts`` in their series in the order they were stored, after what each
    series held, and move the series' rows on (in the caller's transaction)."""
    ordered = sorted(receipts, key=lambda r: r.created_at)
    for name in dict.fromkeys(receipt.number_series for receipt in ordered):
        given = [receipt for receipt in ordered if receipt.number_series == name]
        series, _ = ReceiptSeries.objects.select_for_update().get_or_create(merchant=merchant, name=name)
        for offset, receipt in enumerate(given, start=1):
            receipt.number = series.last + offset
        ReceiptSeries.objects.filter(pk=series.pk).update(last=F("last") + len(given))


def _random(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choices(alphabet, k=length))
