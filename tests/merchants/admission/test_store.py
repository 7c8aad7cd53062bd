"""The store of admission's counters and version: Redis with REDIS_URL, memory otherwise
(merchants.admission.store). The same tests run on whichever the suite is configured with."""

import os

import pytest

from merchants.admission.store import Count, MemoryStore, RedisStore, store
from receco.lib import sharedcache


def test_the_store_follows_the_configuration():
    assert isinstance(store(), RedisStore if os.environ.get("REDIS_URL") else MemoryStore)


def test_counters_are_added_to_and_read_in_one_call():
    values, version = store().count([Count("c:a", 60, True), Count("c:a", 60, True), Count("c:b", 60, False)])
    assert (values, version) == ([1, 2, 0], None)


def test_the_version_is_made_when_missing_and_then_kept():
    _, first = store().count([], "v")
    _, second = store().count([Count("c:a", 60, True)], "v")
    assert first == second
    assert len(first) == 16
    store().replace_version("v")
    assert store().count([], "v")[1] != first


def test_add_get_many_and_taking_back():
    assert store().add("c:u", 5, 60) == 5
    assert store().add("c:u", -3, 60) == 2
    assert store().get_many(["c:u", "c:missing"]) == {"c:u": 2}


def test_delete_removes_counters_and_says_how_many_there_were():
    store().count([Count("c:a", 60, True), Count("c:b", 60, True)])
    assert store().delete(["c:a", "c:b", "c:missing"]) == 2
    assert store().get_many(["c:a", "c:b"]) == {}
    assert store().delete([]) == 0


@pytest.mark.redis
def test_in_redis_every_counter_expires_and_stays_under_the_prefix():
    store().count([Count("c:a", 61, True), Count("c:r", 61, False)], "v")
    store().add("c:u", 1, 600)
    client = sharedcache.redis_client()
    assert client.ttl(sharedcache.key("c:a")) in (60, 61)
    assert client.ttl(sharedcache.key("c:u")) in (599, 600)
    assert client.exists(sharedcache.key("c:r")) == 0  # only read: never made
    assert client.ttl(sharedcache.key("v")) == -1  # the version lives until replaced


def test_in_memory_counters_expire(monkeypatch):
    memory = MemoryStore()
    clock = [1000.0]
    monkeypatch.setattr("merchants.admission.store.time.monotonic", lambda: clock[0])
    assert memory.count([Count("c", 10, True)])[0] == [1]
    clock[0] += 11
    assert memory.count([Count("c", 10, True)])[0] == [1]
