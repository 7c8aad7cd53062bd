import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """A delivery of no merchant: the service's own message to a customer (the locker's
    sign-in codes and links)."""

    dependencies = [
        ("merchants", "0004_merchant_identity"),
        ("messaging", "0002_receipt_deliveries"),
    ]

    operations = [
        migrations.AlterField(
            model_name="delivery",
            name="merchant",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="merchants.merchant",
            ),
        ),
    ]
