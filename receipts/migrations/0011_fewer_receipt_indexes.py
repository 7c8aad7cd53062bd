"""Three indexes of receipts_receipt that no query uses go: the LIKE (varchar_pattern_ops)
indexes PostgreSQL had beside the unique token and short code, and the merchant's own,
which every index leading with merchant_id makes redundant.

The two unique constraints stay as they are in the database (the lookup indexes of
getReceipt): only the state says them as UniqueConstraints now, which make no LIKE index.
The indexes are dropped by name, so that no constraint is made again over the whole table
(AlterField would drop and re-add the unique constraints, and the foreign key).
"""

from django.db import migrations, models

# The names Django gave them (deterministic: the table's and column's names, hashed).
LIKE_INDEXES = {
    "receipts_receipt_token_3bbb06af_like": "token",
    "receipts_receipt_short_code_563c56cc_like": "short_code",
}
MERCHANT_INDEX = "receipts_receipt_merchant_id_7e43877d"


def drop_indexes(apps, schema_editor):
    schema_editor.execute(f'DROP INDEX IF EXISTS "{MERCHANT_INDEX}"')
    if schema_editor.connection.vendor == "postgresql":
        for name in LIKE_INDEXES:
            schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


def make_indexes(apps, schema_editor):
    schema_editor.execute(f'CREATE INDEX "{MERCHANT_INDEX}" ON "receipts_receipt" ("merchant_id")')
    if schema_editor.connection.vendor == "postgresql":
        for name, column in LIKE_INDEXES.items():
            schema_editor.execute(f'CREATE INDEX "{name}" ON "receipts_receipt" ("{column}" varchar_pattern_ops)')


class Migration(migrations.Migration):

    dependencies = [
        ("receipts", "0010_receipt_customer_phone_channel"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="receipt",
                    name="token",
                    field=models.CharField(max_length=64),
                ),
                migrations.AlterField(
                    model_name="receipt",
                    name="short_code",
                    field=models.CharField(max_length=6),
                ),
                migrations.AddConstraint(
                    model_name="receipt",
                    constraint=models.UniqueConstraint(fields=["token"], name="receipts_receipt_token_key"),
                ),
                migrations.AddConstraint(
                    model_name="receipt",
                    constraint=models.UniqueConstraint(fields=["short_code"], name="receipts_receipt_short_code_key"),
                ),
                migrations.AlterField(
                    model_name="receipt",
                    name="merchant",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="receipts",
                        to="merchants.merchant",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_indexes, make_indexes, elidable=False)],
        ),
    ]
