"""The receipt's INSERT statement built once per process (``CompiledInsert``).

It reuses what the ORM's fields do on save; tests/receco/lib/test_queries.py holds it to
the ORM's own .create(), so a Django upgrade that changes that fails there.
"""

import datetime

from django.db import connections, router, transaction
from django.db.models import DEFERRED, ForeignKey, JSONField, signals
from django.db.models.fields import (
    AutoFieldMixin,
    BooleanField,
    CharField,
    DateTimeField,
    Field,
    IntegerField,
    TextField,
)


def fetch(db: str, sql: str, params: list, *, all_rows: bool = False):
    """Run ``sql`` on the database ``db`` and return its first row (None for none), or
    every row with ``all_rows``; errors are Django's (IntegrityError...), as a cursor's are.

    On PostgreSQL, with no debug logging or execute wrapper to see it (assertNumQueries
    and the like), what ``connection.cursor()`` does without its wrapper around each call,
    which costs a request more than a look-up's own Python does."""
    connection = connections[db]
    if connection.vendor != "postgresql" or connection.queries_logged or connection.execute_wrappers:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if all_rows else cursor.fetchone()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors, connection.connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if all_rows else cursor.fetchone()


class CompiledInsert:
    """``Model.objects.create(**values)`` with its INSERT statement built once per process.

    For models saved the plain way only: no parents, no ``order_with_respect_to``, no
    field with a placeholder of its own (the ORM's way is taken for anything else), and
    fields that store None as NULL, as Django's own do. Each
    call makes the instance, fills in what ``pre_save`` fills in (``auto_now``...), sends
    the same pre_save and post_save signals as ``save()`` and runs the prepared INSERT.
    """

    def __init__(self, model, using: str, expressions: dict[str, str] | None = None):
        meta = model._meta
        self.model, self.db = model, using
        self.expressions = expressions or {}
        self.fields = [f for f in meta.local_concrete_fields if not f.generated and f is not meta.auto_field]
        # The fields given as parameters; those in ``expressions`` are SQL, and returned.
        self.params_fields = [f for f in self.fields if f.name not in self.expressions]
        computed = [f for f in self.fields if f.name in self.expressions]
        self.returning = [*meta.db_returning_fields, *computed]
        qn = connections[using].ops.quote_name
        values = [self.expressions.get(f.name, "%s") for f in self.fields]
        # Names from the model, quoted by the backend; the values travel as parameters.
        self.sql = (
            f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in self.fields)})"  # noqa: S608
            f" VALUES ({', '.join(values)})"
            f" RETURNING {', '.join(qn(f.column) for f in self.returning)}"
        )
        self.plain = not (
            meta.parents or meta.order_with_respect_to or any(hasattr(f, "get_placeholder") for f in self.fields)
        )
        # What makes an instance the way the ORM makes those it reads (by position, each
        # concrete field in order), far cheaper than by keyword: each field's attname, and
        # its name where a related object may be given for it.
        self._positions = [(f.attname, f.name if f.is_relation else None, f, _default(f)) for f in meta.concrete_fields]
        self._by_position = {f.attname for f in meta.concrete_fields}
        self._by_position |= {f.name for f in meta.concrete_fields if f.is_relation}
        self._variants: dict[tuple, CompiledInsert] = {}
        self._savers: list[tuple] | None = None  # made at the first prepare(): they need the connection

    def with_expressions(self, expressions: dict[str, str]) -> "CompiledInsert":
        """This INSERT with the fields named in ``expressions`` given by those SQL
        expressions instead of parameters (``prepare`` makes none for them), and returned
        with the others: a value a CTE of the same statement computes, such as the next
        number of a series. For plain models only (``create`` on others takes the ORM's
        way, without them). Kept per set of expressions."""
        shape = tuple(sorted(expressions.items()))
        variant = self._variants.get(shape)
        if variant is None:
            variant = self._variants[shape] = CompiledInsert(self.model, self.db, dict(expressions))
        return variant

    def create(self, **values):
        """Return the new saved instance. Raises IntegrityError and the like as save() does."""
        if not self.plain:
            return self.model._default_manager.db_manager(self.db).create(**values)
        return self.execute(*self.prepare(**values))

    def execute(self, obj, params):
        """Run the INSERT ``prepare`` made for ``obj``; return ``obj`` saved. Raises
        IntegrityError and the like as save() does."""
        with transaction.mark_for_rollback_on_error(self.db), connections[self.db].cursor() as cursor:
            cursor.execute(self.sql, params)
            row = cursor.fetchone()
        return self.saved(obj, row)

    def prepare(self, **values):
        """The new instance, not saved yet, and the parameters of ``self.sql`` that save it;
        sends pre_save. For a statement that runs ``self.sql`` within a larger one (a CTE)."""
        obj = self._instance(values)
        connection = connections[self.db]
        signals.pre_save.send(sender=self.model, instance=obj, raw=False, using=self.db, update_fields=None)
        savers = self._savers
        if savers is None:
            savers = self._savers = [(f, *_saver(f, connection)) for f in self.params_fields]
        params = []
        for field, attname, types, adapt in savers:
            # Each field's own pre_save and get_db_prep_save, unless _saver knows what they
            # come to for this value: a sale gives ~17 values, and the calls each field makes
            # for each cost more than the look-up of a receipt's short code.
            value = field.pre_save(obj, True) if attname is None else getattr(obj, attname)
            if value is None:
                params.append(None)  # NULL, for Django's own fields
            elif type(value) in types:
                params.append(value if adapt is None else adapt(value))
            else:
                params.append(field.get_db_prep_save(value, connection=connection))
        return obj, params

    def _instance(self, values: dict):
        """``self.model(**values)``: the same instance (each field its value, or its default;
        a related object given cached), made by position when ``values`` names concrete
        fields only, each once."""
        if not self._by_position.issuperset(values):
            return self.model(**values)
        args, related = [], []
        for attname, name, field, default in self._positions:
            if attname in values:
                if name is not None and name in values:  # given twice: the ORM says how that goes
                    return self.model(**values)
                args.append(values[attname])
            elif name is not None and name in values:
                args.append(DEFERRED)  # set below, through its descriptor, as the ORM sets it
                related.append((name, values[name]))
            else:
                args.append(field.get_default() if default is _ASK else default)
        obj = self.model(*args)
        for name, value in related:
            setattr(obj, name, value)
        return obj

    def saved(self, obj, row):
        """``obj`` saved, given the row of ``self.returning`` its INSERT returned; sends post_save."""
        for field, value in zip(self.returning, row, strict=True):
            setattr(obj, field.attname, value)
        # As Model.save_base marks what it inserted; no public call does. Goes with CompiledInsert.
        obj._state.adding, obj._state.db = False, self.db  # noqa: SLF001
        signals.post_save.send(
            sender=self.model, instance=obj, created=True, update_fields=None, raw=False, using=self.db
        )
        return obj


_ASK = object()


def _default(field):
    """What ``field.get_default()`` returns, where it is the same object at every call (no
    default: None or ""; a default that is not callable: that very object); else _ASK,
    and for a field whose class says its default its own way."""
    own = type(field).get_default
    if own is not Field.get_default and not (own is ForeignKey.get_default and not field.has_default()):
        return _ASK
    if field.has_default():
        return _ASK if callable(field.default) else field.get_default()
    if field.has_db_default():
        return _ASK  # a new DatabaseDefault expression each time
    return field.get_default()


def _saver(field, connection) -> tuple:
    """``(attname, types, adapt)`` for ``field`` of an INSERT on ``connection``: its
    ``pre_save`` is reading ``attname`` (None: call it), and for a value of one of ``types``
    its ``get_db_prep_save`` comes to ``adapt(value)`` (None: the value itself). What
    Django's own fields do, step by step, for the plain values a request gives; a field of
    another class (one that overrides any step) or another value takes the field's own way.
    tests/receco/lib/test_queries.py holds each to the field's own result."""
    attname = field.attname if type(field).pre_save is Field.pre_save else None
    return (attname, *_prep(field, connection))


def _prep(field, connection) -> tuple:
    ops, kind = connection.ops, type(field)
    if kind.get_db_prep_save is ForeignKey.get_db_prep_save:
        # None and "" are the cases it answers itself (None never reaches here).
        types, adapt = _prep(field.target_field, connection)
        return tuple(t for t in types if t is not str), adapt
    if kind.get_db_prep_save is JSONField.get_db_prep_save:
        if kind.get_db_prep_value is JSONField.get_db_prep_value and kind.get_prep_value is Field.get_prep_value:
            encoder = field.encoder
            return (dict, list), lambda value: ops.adapt_json_value(value, encoder)
        return (), None
    if kind.get_db_prep_save is not Field.get_db_prep_save:
        return (), None
    prepare, python = kind.get_prep_value, kind.to_python
    if kind.get_db_prep_value is Field.get_db_prep_value:
        if (prepare, python) in (
            (CharField.get_prep_value, CharField.to_python),
            (TextField.get_prep_value, TextField.to_python),
        ):
            return (str,), None
        if prepare is BooleanField.get_prep_value and python is BooleanField.to_python:
            return (bool,), None
        return (), None
    if prepare is IntegerField.get_prep_value:
        if kind.get_db_prep_value is IntegerField.get_db_prep_value:
            internal_type = field.get_internal_type()
            return (int,), lambda value: ops.adapt_integerfield_value(value, internal_type)
        if kind.get_db_prep_value is AutoFieldMixin.get_db_prep_value:
            return (int,), ops.validate_autopk_value
    if (
        kind.get_db_prep_value is DateTimeField.get_db_prep_value
        and prepare is DateTimeField.get_prep_value
        and python is DateTimeField.to_python
    ):

        def adapt_datetime(value):
            if value.utcoffset() is None:  # naive: the field's own way (its warning, its time zone)
                return field.get_db_prep_save(value, connection=connection)
            return ops.adapt_datetimefield_value(value)

        return (datetime.datetime,), adapt_datetime
    return (), None


_INSERTS: dict[tuple, CompiledInsert] = {}


def compiled_insert(model) -> CompiledInsert:
    """The CompiledInsert of ``model`` on the database the router writes it to, kept per model and database."""
    db = router.db_for_write(model)
    compiled = _INSERTS.get((model, db))
    if compiled is None:
        compiled = _INSERTS[(model, db)] = CompiledInsert(model, db)
    return compiled


def create(model, **values):
    """``model.objects.create(**values)`` on the database the router writes ``model`` to,
    through a CompiledInsert kept per model and database."""
    return compiled_insert(model).create(**values)
