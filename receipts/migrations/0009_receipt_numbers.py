"""Receipt numbers (receipts.numbering). Receipts stored before stay unnumbered: a number
belongs on the document as it was issued, and theirs went out without one."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("merchants", "0008_merchant_receipt_prefix"),
        ("receipts", "0008_sale_search_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="receipt",
            name="number",
            field=models.PositiveBigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="receipt",
            name="number_series",
            field=models.CharField(blank=True, editable=False, max_length=64, null=True),
        ),
        migrations.AddConstraint(
            model_name="receipt",
            constraint=models.UniqueConstraint(
                condition=models.Q(("number__isnull", False)),
                fields=("merchant", "number_series", "number"),
                name="receipt_merchant_number_unique",
            ),
        ),
        migrations.CreateModel(
            name="ReceiptSeries",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=64)),
                ("last", models.PositiveBigIntegerField(default=0)),
                (
                    "merchant",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="merchants.merchant",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "receipt series",
                "constraints": [
                    models.UniqueConstraint(fields=("merchant", "name"), name="receiptseries_merchant_name_unique")
                ],
            },
        ),
    ]
