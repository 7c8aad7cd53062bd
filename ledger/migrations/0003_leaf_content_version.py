# Each leaf keeps the version of the content it signed (receipts.signing), so that it is
# rebuilt in that version: the entries already in the log are of version 1, which
# does not sign the receipt's number; version 2 does.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0002_set_aside_entries'),
    ]

    operations = [
        migrations.AddField(
            model_name='leaf',
            name='version',
            field=models.PositiveSmallIntegerField(db_default=1, verbose_name='content version'),
        ),
    ]
