# The record of a receipt set aside moves from three mostly empty columns of every
# receipt to a table of its own; any such record is carried over.

import django.db.models.deletion
from django.db import migrations, models


def carry_over(apps, schema_editor):
    Receipt = apps.get_model("receipts", "Receipt")
    SetAside = apps.get_model("receipts", "SetAside")
    for receipt in Receipt.objects.filter(set_aside_at__isnull=False).iterator():
        SetAside.objects.create(
            receipt=receipt,
            claimed_token=receipt.claimed_token or "",
            claimed_short_code=receipt.claimed_short_code or "",
            created_at=receipt.set_aside_at,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('receipts', '0003_keyed_receipts_and_deliveries'),
    ]

    operations = [
        migrations.CreateModel(
            name='SetAside',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('claimed_token', models.CharField(max_length=64)),
                ('claimed_short_code', models.CharField(max_length=6)),
                ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='set aside at')),
                ('receipt', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='set_asides', to='receipts.receipt')),
            ],
            options={
                'verbose_name': 'receipt set aside',
                'verbose_name_plural': 'receipts set aside',
            },
        ),
        migrations.RunPython(carry_over, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='receipt',
            name='claimed_short_code',
        ),
        migrations.RemoveField(
            model_name='receipt',
            name='claimed_token',
        ),
        migrations.RemoveField(
            model_name='receipt',
            name='set_aside_at',
        ),
    ]
