from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0006_report_events"),
    ]

    operations = [
        migrations.AddField(
            model_name="endpoint",
            name="expires_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
