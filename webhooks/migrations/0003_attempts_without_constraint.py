"""Before the deliveries move into the outbox (0004): their attempts' reference loses its
constraint, so that it can point at the moved rows (0005 gives it one again)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0002_outbox_without_database_constraints"),
    ]

    operations = [
        migrations.AlterField(
            model_name="attempt",
            name="delivery",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="attempt_set",
                to="webhooks.delivery",
            ),
        ),
    ]
