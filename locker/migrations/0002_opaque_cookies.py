"""The locker's cookies hold random tokens only (locker.sessions): a session is a row found
by its token's digest, and a sign-in keeps the digest of the waiting browser's token and
the contact masked. The per-contact session keys go, and with them every session signed
in before: those customers sign in again."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("locker", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Session",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("token_digest", models.CharField(max_length=64)),
                (
                    "kind",
                    models.CharField(
                        choices=[("sms", "Code by text message"), ("email", "Link by email")], max_length=8
                    ),
                ),
                ("contact", models.CharField(max_length=254)),
                ("expires_at", models.DateTimeField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.DeleteModel(
            name="SessionKey",
        ),
        migrations.AddField(
            model_name="signin",
            name="browser",
            field=models.CharField(max_length=64, null=True),
        ),
        migrations.AddField(
            model_name="signin",
            name="masked",
            field=models.CharField(blank=True, db_default="", default="", max_length=254),
        ),
        migrations.AddConstraint(
            model_name="signin",
            constraint=models.UniqueConstraint(fields=("browser",), name="locker_signin_browser_unique"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(fields=["contact"], name="locker_session_contact"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(fields=["expires_at"], name="locker_session_expires"),
        ),
        migrations.AddConstraint(
            model_name="session",
            constraint=models.UniqueConstraint(fields=("token_digest",), name="locker_session_token_unique"),
        ),
    ]
