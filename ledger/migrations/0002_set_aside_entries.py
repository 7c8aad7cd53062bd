# A receipt set aside is an entry of its own in the log (ledger.entries): its leaf names
# the SetAside row, and the appender keeps a cursor over that table as over voids.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='head',
            name='set_aside_cursor',
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='leaf',
            name='set_aside',
            field=models.OneToOneField(db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='log_leaf', to='receipts.setaside'),
        ),
        migrations.AlterField(
            model_name='leaf',
            name='kind',
            field=models.CharField(choices=[('receipt', 'Receipt'), ('void', 'Void'), ('set_aside', 'Set aside')], max_length=16),
        ),
    ]
