import merchants.numbering
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("merchants", "0007_audit_trail_and_team"),
    ]

    operations = [
        migrations.AddField(
            model_name="merchant",
            name="receipt_prefix",
            field=models.CharField(
                blank=True,
                help_text="Begins every receipt number: MP gives MP-2026-000123. Capitals and digits; blank: the "
                "first letters of the merchant id. A new prefix starts a new series at 1.",
                max_length=10,
                validators=[merchants.numbering.validate_prefix],
                verbose_name="receipt number prefix",
            ),
        ),
    ]
