from django.conf import settings
from django.core.management.base import BaseCommand

from merchants.models import Merchant
from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.validation import validate_sale

DEMO_MERCHANT = "demo-shop"
DEMO_TOKEN = "rcpt_demo0001_rcpt42"
DEMO_SHORT_CODE = "DEMO42"


class Command(BaseCommand):
    help = "Create the demo merchant and its demo receipt (idempotent) and print where to look."

    def handle(self, *args, **options):
        merchant, _ = Merchant.objects.get_or_create(
            string_id=DEMO_MERCHANT, defaults={"name": "Demo Shop", "accent_color": "#1d4ed8"}
        )
        # An older demo receipt is kept as it is: ./dev up must work on any earlier database.
        receipt = Receipt.objects.filter(token=DEMO_TOKEN).first() or self._create_demo_receipt(merchant)
        api = f"{settings.RECECO_WEB_URL}/api/trpc"
        self.stdout.write(
            f"""
Demo merchant: {merchant.string_id}   demo receipt: short code {receipt.short_code}
  Receipt page: {receipt.public_url}
  Scan page:    {settings.RECECO_WEB_URL}/app/scan  (type {receipt.short_code})
  Dashboard:    {settings.RECECO_WEB_URL}/admin/, signed in as a user of demo-shop, made by
                ./dev manage createmerchantuser demo-shop <name> --password '<a long passphrase>' --owner
  API:          {api}/<procedure>, described at {settings.RECECO_WEB_URL}/api/reference/
  Operations:   {settings.RECECO_WEB_URL}/readyz  {settings.RECECO_WEB_URL}/metrics

Try it:
  curl -s '{api}/getReceipt?input=%7B%22token%22%3A%22{receipt.short_code}%22%7D'
  curl -s -X POST {api}/createReceiptFromPOS -H 'Content-Type: application/json' \\
    -d '{{"merchant_string_id": "test-my-shop", "total_amount": 2500,
         "items": [{{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}}]}}'
"""
        )

    def _create_demo_receipt(self, merchant: Merchant) -> Receipt:
        sale = validate_sale(
            {
                "token": DEMO_TOKEN,
                "short_code": DEMO_SHORT_CODE,
                "merchant_string_id": DEMO_MERCHANT,
                "total_amount": 130000,
                "currency": "NGN",
                "items": [
                    {"name": "Jollof rice (plate)", "quantity": 2, "unit_price": 50000, "total_price": 100000},
                    {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
                ],
                "category": "restaurant",
                "payment_method": "card",
                "location": "Lekki Phase 1",
            }
        )
        return create_receipt(merchant, sale, keyed=True).receipt
