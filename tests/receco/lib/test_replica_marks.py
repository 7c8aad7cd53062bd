"""A replica one process marked down is skipped by the others (receco.lib.replicas), through
Redis; the mark lapses unless the process probing the replica renews it."""

import pytest

from receco.lib import replicas

pytestmark = pytest.mark.redis


@pytest.fixture
def two_replicas(monkeypatch):
    monkeypatch.setattr(replicas, "REPLICAS", ("replica1", "replica2"))
    monkeypatch.setattr(replicas, "_down", set())
    monkeypatch.setattr(replicas, "_shared_down", set())
    monkeypatch.setattr(replicas, "_shared_read_at", 0.0)
    yield
    for alias in replicas.REPLICAS:
        replicas.set_shared_mark(alias, False)


def test_a_replica_marked_down_elsewhere_is_skipped_here(two_replicas):
    replicas.set_shared_mark("replica1", True)  # as another worker does, finding it failing
    assert {replicas.pick() for _ in range(20)} == {"replica2"}


def test_it_is_read_again_once_the_mark_is_lifted(two_replicas, monkeypatch):
    replicas.set_shared_mark("replica1", True)
    replicas.pick()
    replicas.set_shared_mark("replica1", False)  # the probing process found it well
    monkeypatch.setattr(replicas, "_shared_read_at", 0.0)  # a second later
    assert {replicas.pick() for _ in range(50)} == {"replica1", "replica2"}


def test_the_mark_lapses_unless_renewed(two_replicas):
    replicas.set_shared_mark("replica1", True)
    ttl = replicas.sharedcache.redis_client().ttl(replicas.shared_mark_key("replica1"))
    assert 0 < ttl <= replicas.SHARED_MARK_SECONDS
