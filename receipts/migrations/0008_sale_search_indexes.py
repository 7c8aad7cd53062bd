"""The indexes of the dashboard's search (receipts.search): a sale found by amount, card's
last four, the customer's email or phone, or days of sale, by an exact look-up; the
contact's two also list a customer's receipts newest first in their locker (locker.listing).

On PostgreSQL they are built with CREATE INDEX CONCURRENTLY: a plain CREATE INDEX holds
every new sale until it is done, and a large receipts table takes a while to index."""

import django.db.models.fields.json
import django.db.models.functions.text
from django.db import migrations, models


class AddIndexWhileSelling(migrations.AddIndex):
    """AddIndex, concurrently on PostgreSQL (django.contrib.postgres's AddIndexConcurrently
    there; a plain CREATE INDEX on the other databases, which that one refuses)."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)
        return None

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)
        return None


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("receipts", "0007_removed_receipts"),
    ]

    operations = [
        AddIndexWhileSelling(
            model_name="receipt",
            index=models.Index(fields=["total_amount", "merchant"], name="receipt_amount_merchant"),
        ),
        AddIndexWhileSelling(
            model_name="receipt",
            index=models.Index(
                django.db.models.fields.json.KeyTextTransform(
                    "card_last4", django.db.models.fields.json.KeyTextTransform("payment_details", "details")
                ),
                condition=models.Q(("details__isnull", False)),
                name="receipt_card_last4",
            ),
        ),
        # The customer's contact, newest first: the dashboard's search by email or phone,
        # and the customer's locker (locker.listing), which lists a contact's receipts by date.
        AddIndexWhileSelling(
            model_name="receipt",
            index=models.Index(
                condition=models.Q(("customer_phone__isnull", False)),
                fields=["customer_phone", "-transaction_date"],
                name="receipt_phone_date",
            ),
        ),
        AddIndexWhileSelling(
            model_name="receipt",
            index=models.Index(
                django.db.models.functions.text.Lower("customer_email"),
                models.OrderBy(models.F("transaction_date"), descending=True),
                condition=models.Q(("customer_email__isnull", False)),
                name="receipt_email_date",
            ),
        ),
        AddIndexWhileSelling(
            model_name="receipt",
            index=models.Index(fields=["merchant", "transaction_date"], name="receipt_merchant_sold"),
        ),
    ]
