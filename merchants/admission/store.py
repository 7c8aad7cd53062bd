"""Where admission keeps its counters and its shared version: in Redis when REDIS_URL is
set (every process and machine sees the same counts, one script call per request), in
this process's memory otherwise (the embedded default, one process).

A counter is a name and a time to live: ``count`` adds one to some counters (a missing
one is created with its time to live), reads others (a missing one reads 0) and reads
the version (set to a fresh random value when missing), all in one round trip. Every
name is under RECECO_CACHE_PREFIX.
"""

import functools
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Sequence
from typing import NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from redis.exceptions import NoScriptError

from receco.lib import sharedcache


class Count(NamedTuple):
    """One counter a call touches: ``add`` one to it (created with ``ttl`` seconds to
    live when missing), or only read it."""

    name: str
    ttl: int
    add: bool


class Store:
    def count(self, counts: Sequence[Count], version: str | None = None) -> tuple[list[int], str | None]:
        """Apply ``counts`` and read the value of the version entry ``version`` (if named);
        return the counters' values after the call and the version. Raises when Redis fails."""
        raise NotImplementedError

    def add(self, name: str, amount: int, ttl: int) -> int:
        """Add ``amount`` (may be negative) to a counter; return its new value."""
        raise NotImplementedError

    def get_many(self, names: Sequence[str]) -> dict[str, int]:
        """The counters of ``names`` that exist, by name."""
        raise NotImplementedError

    def replace_version(self, version: str) -> None:
        """Give the version entry a fresh random value."""
        raise NotImplementedError

    def delete(self, names: Sequence[str]) -> int:
        """Delete the counters of ``names`` (erasure); return how many there were."""
        raise NotImplementedError


# One command for all of a call's counters: fewer bytes to build, send and parse than a
# pipeline, and as few calls inside Redis as the counts need (on a small machine Redis's
# CPU is the service's too). ARGV[1] says how many KEYS are counters, each with two more
# ARGV: its time to live, then 1 to add one or 0 to read it. A key after the counters is
# the version: read, and set to the last ARGV when missing.
_COUNT_SCRIPT = """
local n = tonumber(ARGV[1])
local results = {}
for i = 1, n do
  if ARGV[2 * i + 1] == '1' then
    results[i] = redis.call('INCR', KEYS[i])
    if results[i] == 1 then
      redis.call('EXPIRE', KEYS[i], ARGV[2 * i])
    end
  else
    results[i] = tonumber(redis.call('GET', KEYS[i]) or 0)
  end
end
if #KEYS > n then
  local version = redis.call('GET', KEYS[n + 1])
  if not version then
    redis.call('SET', KEYS[n + 1], ARGV[2 * n + 2], 'NX')
    version = redis.call('GET', KEYS[n + 1])
  end
  results[n + 1] = version
end
return results
"""
_COUNT_SCRIPT_SHA = hashlib.sha1(_COUNT_SCRIPT.encode()).hexdigest()  # noqa: S324 (Redis names scripts so)


class RedisStore(Store):
    def count(self, counts, version=None):
        prefix = sharedcache.key("")
        command = ["EVALSHA", _COUNT_SCRIPT_SHA, 0]
        command += [prefix + count.name for count in counts]
        if version is not None:
            command.append(prefix + version)
        command[2] = len(command) - 3  # how many keys
        command.append(len(counts))
        for count in counts:
            command += (count.ttl, 1 if count.add else 0)
        if version is not None:
            command.append(os.urandom(8).hex())  # the version, should it be missing
        client = sharedcache.redis_client()
        try:
            results = client.execute_command(*command)
        except NoScriptError:  # a Redis that has not seen the script yet (or was restarted)
            command[:2] = ["EVAL", _COUNT_SCRIPT]
            results = client.execute_command(*command)
        if version is None:
            return results, None
        return results[:-1], results[-1].decode()

    def add(self, name, amount, ttl):
        name = sharedcache.key(name)
        with sharedcache.redis_client().pipeline() as pipe:
            pipe.set(name, 0, ex=ttl, nx=True)  # made with its time to live if missing
            pipe.incrby(name, amount)
            _, value = pipe.execute()
        return value

    def get_many(self, names):
        if not names:
            return {}
        values = sharedcache.redis_client().mget([sharedcache.key(name) for name in names])
        return {name: int(value) for name, value in zip(names, values, strict=True) if value is not None}

    def replace_version(self, version):
        sharedcache.redis_client().set(sharedcache.key(version), secrets.token_hex(8))

    def delete(self, names):
        if not names:
            return 0
        return sharedcache.redis_client().delete(*[sharedcache.key(name) for name in names])


class MemoryStore(Store):
    """Counters in this process: correct for one process (``./dev up``, the test suite)."""

    MAX_ENTRIES = 100_000

    def __init__(self):
        self._lock = threading.Lock()
        self._values: dict[str, tuple[object, float]] = {}  # name -> (value, expires at)

    def count(self, counts, version=None):
        now = time.monotonic()
        with self._lock:
            results = [self._add(count.name, 1, count.ttl, now) if count.add else self._get(count.name, now, 0)
                       for count in counts]  # fmt: skip
            if version is None:
                return results, None
            current = self._get(version, now, None)
            if current is None:
                current = secrets.token_hex(8)
                self._values[version] = (current, float("inf"))
            return results, current

    def add(self, name, amount, ttl):
        with self._lock:
            return self._add(name, amount, ttl, time.monotonic())

    def get_many(self, names):
        now = time.monotonic()
        with self._lock:
            found = {name: self._get(name, now, None) for name in names}
        return {name: value for name, value in found.items() if value is not None}

    def replace_version(self, version):
        with self._lock:
            self._values[version] = (secrets.token_hex(8), float("inf"))

    def delete(self, names):
        now = time.monotonic()
        with self._lock:
            found = [name for name in set(names) if self._get(name, now, None) is not None]
            for name in names:
                self._values.pop(name, None)
        return len(found)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def _get(self, name, now, default):
        entry = self._values.get(name)
        if entry is None or entry[1] <= now:
            return default
        return entry[0]

    def _add(self, name, amount, ttl, now):
        entry = self._values.get(name)
        if entry is None or entry[1] <= now:
            if len(self._values) >= self.MAX_ENTRIES:
                self._values = {k: v for k, v in self._values.items() if v[1] > now}
            entry = (0, now + ttl)
        value = entry[0] + amount
        self._values[name] = (value, entry[1])
        return value


_memory = MemoryStore()


def store() -> Store:
    """The store of this configuration: Redis with REDIS_URL, else this process's memory."""
    return _redis_store() if settings.REDIS_URL else _memory


@functools.cache
def _redis_store() -> RedisStore:
    return RedisStore()


@receiver(setting_changed)
def _forget_memory(setting, **kwargs):
    if setting == "REDIS_URL":
        _memory.clear()
