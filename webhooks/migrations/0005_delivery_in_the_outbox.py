"""A webhook delivery is a delivery of the outbox now: webhooks.Delivery becomes a proxy
of messaging.Delivery, and attempts reference it again with a constraint."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0004_deliveries_into_the_outbox"),
        ("messaging", "0002_receipt_deliveries"),
    ]

    operations = [
        migrations.AlterField(
            model_name="attempt",
            name="delivery",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="attempt_set",
                to="messaging.delivery",
            ),
        ),
        migrations.DeleteModel(name="Delivery"),
        migrations.CreateModel(
            name="Delivery",
            fields=[],
            options={
                "verbose_name": "webhook delivery",
                "verbose_name_plural": "webhook deliveries",
                "ordering": ["-created_at"],
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("messaging.delivery",),
        ),
        migrations.AlterField(
            model_name="attempt",
            name="delivery",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="attempt_set",
                to="webhooks.delivery",
            ),
        ),
    ]
