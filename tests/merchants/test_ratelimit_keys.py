"""merchants.ratelimits counts in django-ratelimit's counters, naming them itself."""

import pytest
from django_ratelimit import ALL
from django_ratelimit.core import _make_cache_key

from merchants.ratelimits import Policy, ratelimit_key


@pytest.mark.parametrize("rate", ["1000/m", "100/s", "30/5m", "7/h", "2/d"])
@pytest.mark.parametrize("identity", ["203.0.113.7", "key:3kTq9ZxW1bNa", "2001:db8::"])
def test_its_counter_names_are_django_ratelimits(rate, identity):
    for window in (0, 1_800_000_000, 1_800_000_017):
        expected = _make_cache_key("receco.key", window, rate, identity, ALL)
        assert ratelimit_key("receco.key", window, Policy.parse(rate), identity) == expected


def test_another_hash_algorithm_is_django_ratelimits_too(settings):
    settings.RATELIMIT_HASH_ALGORITHM = "hashlib.sha512"
    expected = _make_cache_key("receco.ip", 60, "600/m", "203.0.113.7", ALL)
    assert ratelimit_key("receco.ip", 60, Policy.parse("600/m"), "203.0.113.7") == expected
