import django.db.models.functions.text
from django.db import migrations, models


class Migration(migrations.Migration):
    """The customer's locker finds the receipts sent to one phone number or email address."""

    dependencies = [
        ("receipts", "0007_removed_receipts"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="receipt",
            index=models.Index(
                condition=models.Q(("customer_phone__isnull", False)),
                fields=["customer_phone", "-transaction_date"],
                name="receipt_phone_date",
            ),
        ),
        migrations.AddIndex(
            model_name="receipt",
            index=models.Index(
                django.db.models.functions.text.Lower("customer_email"),
                models.OrderBy(models.F("transaction_date"), descending=True),
                condition=models.Q(("customer_email__isnull", False)),
                name="receipt_email_date",
            ),
        ),
    ]
