"""The compiled INSERT (receco.lib.queries) gives exactly what the ORM gives.

It reuses what the ORM's fields do on save, so these tests hold it to the ORM's own
.create() on every model and field kind it serves: a Django upgrade that changes the internals fails here, loudly.
"""

import datetime
import warnings

import pytest
from django.apps import apps
from django.db import connection
from django.db.models.signals import post_save, pre_save

from merchants.models import Merchant
from messaging.models import Delivery
from receco.lib.queries import _ASK, _default, _saver, compiled_insert, create
from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def _values(obj) -> dict:
    return {field.attname: getattr(obj, field.attname) for field in obj._meta.concrete_fields}


def test_create_is_the_orms_create(merchant):
    values = {
        "merchant": merchant,
        "token": "rcpt_compiled1_aaaaaa",
        "short_code": "COMP01",
        "merchant_name": "Mama Put Kitchen",
        "accent_color": "#c2410c",
        "total_amount": 2500,
        "currency": "NGN",
        "transaction_date": "2026-11-22T10:15:00Z",
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
        "fingerprint": "f" * 64,
    }
    seen = []

    def note(sender, instance, **kwargs):
        seen.append((kwargs.get("created"), instance.pk is not None))

    pre_save.connect(note, sender=Receipt)
    post_save.connect(note, sender=Receipt)
    try:
        compiled = create(Receipt, **values)
    finally:
        pre_save.disconnect(note, sender=Receipt)
        post_save.disconnect(note, sender=Receipt)
    assert seen == [(None, False), (True, True)]  # the signals of save(), in its order
    orm = Receipt.objects.create(**{**values, "token": "rcpt_compiled2_aaaaaa", "short_code": "COMP02"})
    stored = Receipt.objects.get(pk=compiled.pk)
    different = {"id", "token", "short_code", "created_at", "updated_at"}
    assert {k: v for k, v in _values(stored).items() if k not in different} == {
        k: v for k, v in _values(Receipt.objects.get(pk=orm.pk)).items() if k not in different
    }
    assert stored.created_at is not None
    assert stored.updated_at is not None
    assert (compiled._state.adding, compiled._state.db) == (False, orm._state.db)


def test_create_raises_as_create_does(stored):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        create(Receipt, **{**_values(stored), "id": None})


def test_create_serves_every_model(stored):
    delivery = create(Delivery, merchant=stored.merchant, receipt=stored, channel="email", destination="a@example.com")
    assert Delivery.objects.get(pk=delivery.pk).destination == "a@example.com"
    merchant = create(Merchant, string_id="made-by-create", name="Made")
    assert Merchant.objects.get(string_id="made-by-create").pk == merchant.pk


# A value of each kind a request gives a field, and a few it does not.
_SAMPLES = [
    "",
    "text",
    "2026-11-22T10:15:00Z",
    "12",
    0,
    7,
    2**62,
    True,
    False,
    1.5,
    {"a": [1, "b"]},
    [{"name": "Tea"}],
    datetime.datetime(2026, 11, 22, 10, 15, tzinfo=datetime.UTC),
    datetime.datetime(2026, 11, 22, 10, 15, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
    datetime.datetime(2026, 11, 22, 10, 15),  # naive: the field's own way, its warning included
    datetime.date(2026, 11, 22),
]


def _same(made, expected) -> bool:
    """The same parameter: the same type and value (psycopg's Jsonb by what it wraps and dumps)."""
    if type(made) is not type(expected):
        return False
    if hasattr(expected, "obj"):
        return (made.obj, made.dumps) == (expected.obj, expected.dumps)
    return made == expected


@pytest.mark.parametrize(
    "field",
    [f for model in apps.get_models() for f in model._meta.local_concrete_fields],
    ids=lambda f: f"{f.model._meta.label}.{f.name}",
)
def test_each_fields_short_way_is_its_own_way(field):
    """Where CompiledInsert.prepare skips a field's chain of calls, it makes what the chain makes."""
    attname, types, adapt = _saver(field, connection)
    assert attname in (field.attname, None)
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        assert attname is None  # its pre_save fills the moment in
    for value in _SAMPLES:
        if type(value) not in types:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = field.get_db_prep_save(value, connection=connection)
            made = value if adapt is None else adapt(value)
        assert _same(made, expected), (value, made, expected)


def test_a_sales_parameters_are_those_its_fields_make(merchant):
    """prepare() of a sale's values: each parameter what the field's own pre_save and
    get_db_prep_save make of the instance's value."""
    insert = compiled_insert(Receipt)
    values = {
        "merchant": merchant,
        "token": "rcpt_compiled3_aaaaaa",
        "short_code": "COMP03",
        "merchant_name": "Mama Put Kitchen",
        "merchant_logo": None,
        "accent_color": "#c2410c",
        "total_amount": 2500,
        "currency": "NGN",
        "transaction_date": datetime.datetime(2026, 11, 22, 10, 15, tzinfo=datetime.UTC),
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
        "status": "completed",
        "livemode": True,
        "keyed": False,
        "details": {"tip_amount": 100},
        "fingerprint": "f" * 64,
        "number_series": "MP-2026",
    }
    receipt, params = insert.prepare(**values)
    expected = []
    for field in insert.params_fields:
        value = getattr(receipt, field.attname)  # pre_save has filled in created_at and updated_at
        expected.append(None if value is None else field.get_db_prep_save(value, connection=connection))
    assert len(params) == len(expected)
    for made, wanted in zip(params, expected, strict=True):
        assert _same(made, wanted), (made, wanted)


@pytest.mark.parametrize(
    "field",
    [f for model in apps.get_models() for f in model._meta.concrete_fields],
    ids=lambda f: f"{f.model._meta.label}.{f.name}",
)
def test_a_default_kept_is_the_one_the_field_gives(field):
    """CompiledInsert keeps a field's default where get_default() gives the same at every call."""
    kept = _default(field)
    if kept is not _ASK:
        given = field.get_default()
        assert (type(kept), kept) == (type(given), given)
