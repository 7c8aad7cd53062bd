"""An index of the words of a sale's items' names, for the dashboard's search by an item
(dashboard.search.ItemNamed): on PostgreSQL only, a trigram (pg_trgm) GIN index of the
names as one text, which a term's ILIKE '%jollof%' reads instead of every sale of the shop.

pg_trgm is a trusted extension (PostgreSQL 13 and later): the database's owner, or any
role that may create in it, makes it; none of it is made on SQLite (not by
django.contrib.postgres's TrigramExtension: going back, it asks SQLite for pg_extension).
Going back drops the index and leaves the extension, which other objects may use. The
index is made CONCURRENTLY (so the migration is not atomic): a shop's sales keep being
written while it is built. It is not in Receipt.Meta (SQLite could not make it), so the models' state does
not name it and ``makemigrations`` has nothing to add.
"""

from django.db import migrations

# Also dashboard.search.ITEM_NAMES: the query must say the same expression for the planner to use the index.
ITEM_NAMES = "(jsonb_path_query_array(items, '$[*].name')::text)"
INDEX = "receipt_item_names_trgm"


def make_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        schema_editor.execute(
            f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{INDEX}" ON "receipts_receipt" USING gin ({ITEM_NAMES} gin_trgm_ops)'
        )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{INDEX}"')


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("receipts", "0012_gift_receipt"),
    ]

    operations = [
        migrations.RunPython(make_index, drop_index, elidable=False),
    ]
