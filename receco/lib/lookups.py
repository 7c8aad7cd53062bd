"""The one-row look-ups every API request makes (a receipt by token or short code, a
merchant by its id, an API key with its merchant), their SQL written once per process.

Kept beside the ORM because it buys that much: ``Model.objects.get()`` builds its SQL
again at every call (every column of the model, quoted and aliased), which costs more
than PostgreSQL takes to answer the indexed look-up; through ``get()`` a ``getReceipt``
took 2.6 times the instructions and a sale 1.3 times (bench/results/ of 2026-12-05,
issue 34). Built on documented API only: the model's ``_meta`` (``concrete_fields``,
``db_table``, each field's ``column`` and ``attname``), the connection's ``cursor()``
and ``ops.quote_name``, ``Model.from_db`` (Django's own way of making an instance from a
row) and each field's ``from_db_value``. On PostgreSQL the backend adds no converter of
its own, so that is all the ORM does to a row; elsewhere (SQLite, whose backend converts
dates, booleans and decimals) the ORM's own ``get()`` runs. tests/receco/lib/
test_lookups.py holds both to ``get()``.
"""

from django.db import connections, router


class Lookup:
    """``model._default_manager.select_related(<related>).get(<field>=value)``, where
    ``related`` names at most one foreign key of ``model``."""

    def __init__(self, model, field: str, related: str | None = None):
        self.model, self.field, self.related = model, field, related
        self._sql: dict[str, tuple] = {}  # by vendor: the SQL and how to read its row

    def get(self, value, using: str | None = None):
        """The one object whose field equals ``value``, from the database ``using`` (by
        default the one the router reads the model from). Raises the model's
        DoesNotExist, or MultipleObjectsReturned."""
        db = using or router.db_for_read(self.model)
        connection = connections[db]
        if connection.vendor != "postgresql":
            queryset = self.model._default_manager.db_manager(db)
            if self.related:
                queryset = queryset.select_related(self.related)
            return queryset.get(**{self.field: value})
        shape = self._sql.get(connection.vendor)
        if shape is None:
            shape = self._sql[connection.vendor] = self._shape(connection)
        sql, parts = shape
        with connection.cursor() as cursor:
            cursor.execute(sql, [value])
            rows = cursor.fetchmany(2)
        name = self.model._meta.object_name
        if not rows:
            raise self.model.DoesNotExist(f"{name} matching query does not exist.")
        if len(rows) > 1:
            raise self.model.MultipleObjectsReturned(f"get() returned more than one {name}")
        row = rows[0]
        (model, attnames, converters, columns), *related = parts
        obj = _instance(model, db, attnames, converters, row[columns], connection)
        for related_model, related_attnames, related_converters, related_columns in related:
            # Assigned as any related object is: through the foreign key's descriptor.
            setattr(
                obj,
                self.related,
                _instance(related_model, db, related_attnames, related_converters, row[related_columns], connection),
            )
        return obj

    def _shape(self, connection) -> tuple:
        qn = connection.ops.quote_name
        meta = self.model._meta
        models = [(meta, qn(meta.db_table))]
        joins = ""
        if self.related:
            foreign_key = meta.get_field(self.related)
            target = foreign_key.related_model._meta
            models.append((target, qn(target.db_table)))
            joins = (
                f" INNER JOIN {qn(target.db_table)} ON {qn(target.db_table)}.{qn(foreign_key.target_field.column)}"
                f" = {qn(meta.db_table)}.{qn(foreign_key.column)}"
            )
        columns, parts = [], []
        for model_meta, table in models:
            fields = model_meta.concrete_fields
            start = len(columns)
            columns += [f"{table}.{qn(field.column)}" for field in fields]
            converters = [(index, field) for index, field in enumerate(fields) if hasattr(field, "from_db_value")]
            parts.append(
                (model_meta.model, [field.attname for field in fields], converters, slice(start, len(columns)))
            )
        column = qn(meta.get_field(self.field).column)
        sql = (
            f"SELECT {', '.join(columns)} FROM {qn(meta.db_table)}{joins}"  # noqa: S608 (names from the models)
            f" WHERE {qn(meta.db_table)}.{column} = %s LIMIT 2"
        )
        return sql, parts


def _instance(model, db: str, attnames: list, converters: list, values: tuple, connection):
    if converters:
        values = list(values)
        for index, field in converters:
            values[index] = field.from_db_value(values[index], None, connection)
    return model.from_db(db, attnames, values)
