"""A Lookup (receco.lib.lookups) gives exactly what the ORM's get() gives: the same values
of the same types, the related object loaded with it, the same exceptions."""

import pytest
from django.db import connection

from merchants.models import ApiKey, Merchant
from receco.lib.lookups import Lookup
from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def _values(obj) -> dict:
    return {field.attname: getattr(obj, field.attname) for field in obj._meta.concrete_fields}


@pytest.mark.parametrize("field", ["token", "short_code"])
def test_a_lookup_is_the_orms_get(stored, field):
    value = getattr(stored, field)
    found = Lookup(Receipt, field).get(value)
    orm = Receipt.objects.get(**{field: value})
    assert type(found) is Receipt
    assert _values(found) == _values(orm)  # JSON decoded, aware datetimes, alike
    assert (found._state.adding, found._state.db) == (False, orm._state.db)


def test_a_lookup_with_its_related_object_is_select_related(live_key, django_assert_num_queries):
    lookup_id = live_key.api_key.lookup_id
    with django_assert_num_queries(1):
        found = Lookup(ApiKey, "lookup_id", related="merchant").get(lookup_id)
        merchant = found.merchant  # loaded with it: no query
    orm = ApiKey.objects.select_related("merchant").get(lookup_id=lookup_id)
    assert _values(found) == _values(orm)
    assert type(merchant) is Merchant
    assert _values(merchant) == _values(orm.merchant)


def test_a_lookup_raises_as_get_does(stored, receipt_factory):
    with pytest.raises(Receipt.DoesNotExist, match="^Receipt matching query does not exist.$"):
        Lookup(Receipt, "token").get("rcpt_nothing00_aaaaaa")
    receipt_factory(token="rcpt_second001_aaaaaa", short_code="SECND2")
    with pytest.raises(Receipt.MultipleObjectsReturned):
        Lookup(Receipt, "merchant_name").get(stored.merchant_name)


def test_on_postgresql_a_lookup_runs_its_own_sql_and_elsewhere_the_orms(stored, django_assert_num_queries):
    with django_assert_num_queries(1) as queries:
        Lookup(Receipt, "token").get(stored.token)
    (sql,) = [query["sql"] for query in queries.captured_queries]
    if connection.vendor == "postgresql":
        assert sql.endswith("LIMIT 2")  # written once, as the module says
    else:
        assert "LIMIT 21" in sql  # the ORM's get()
