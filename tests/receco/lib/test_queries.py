"""Compiled queries (receco.lib.queries) give exactly what the ORM gives.

They reuse ORM internals (the compiler's select and klass_info, related populators), so
these tests hold them to the ORM's own .get() and .create() on every model and field kind
they serve: a Django upgrade that changes the internals fails here, loudly.
"""

import pytest
from django.core.exceptions import MultipleObjectsReturned
from django.db.models.signals import post_save, pre_save

from merchants.models import ApiKey, Merchant
from messaging.models import Delivery
from receco.lib.queries import create, get_by
from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def _values(obj) -> dict:
    return {field.attname: getattr(obj, field.attname) for field in obj._meta.concrete_fields}


@pytest.mark.parametrize("field", ["token", "short_code"])
def test_get_by_is_the_orms_get(stored, field):
    value = getattr(stored, field)
    compiled = get_by(Receipt, field, value)
    orm = Receipt.objects.get(**{field: value})
    assert type(compiled) is Receipt
    assert _values(compiled) == _values(orm)  # JSON items, aware datetimes, booleans converted alike
    assert (compiled._state.adding, compiled._state.db) == (False, orm._state.db)


def test_get_by_with_a_related_object_is_select_related(live_key):
    compiled = get_by(ApiKey, "lookup_id", live_key.api_key.lookup_id, related=("merchant",))
    orm = ApiKey.objects.select_related("merchant").get(lookup_id=live_key.api_key.lookup_id)
    assert _values(compiled) == _values(orm)
    assert "merchant" in compiled._state.fields_cache  # loaded with it, no query later
    assert _values(compiled.merchant) == _values(orm.merchant)


def test_get_by_raises_as_get_does(stored, receipt_factory):
    with pytest.raises(Receipt.DoesNotExist):
        get_by(Receipt, "token", "rcpt_nothing00_aaaaaa")
    receipt_factory(token="rcpt_second001_aaaaaa", short_code="SECND2")
    with pytest.raises(MultipleObjectsReturned):
        get_by(Receipt, "merchant_name", stored.merchant_name)


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
