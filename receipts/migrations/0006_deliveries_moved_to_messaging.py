"""Deliveries are the outbox's now (messaging.Delivery): messaging's 0002 copies them
first (it runs before this one)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("receipts", "0005_refunds_voids_and_details"),
    ]

    operations = [migrations.DeleteModel(name="Delivery")]
