from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="SessionKey",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("digest", models.CharField(max_length=64, unique=True)),
                ("key", models.CharField(max_length=32)),
                ("signed_in_at", models.DateTimeField(db_index=True)),
            ],
        ),
        migrations.CreateModel(
            name="SignIn",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[("sms", "Code by text message"), ("email", "Link by email")], max_length=8
                    ),
                ),
                ("contact", models.CharField(blank=True, max_length=254)),
                ("nonce", models.CharField(max_length=32)),
                ("tries", models.PositiveSmallIntegerField(default=0)),
                ("expires_at", models.DateTimeField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "indexes": [
                    models.Index(fields=["expires_at"], name="locker_signin_expires"),
                    models.Index(fields=["contact"], name="locker_signin_contact"),
                ],
            },
        ),
    ]
