"""API keys and merchants remembered by each process between requests, under a shared version.

Reading a key costs a database query, as much as the look-up a request is for, and every
sale needs its merchant. So a process remembers the keys and merchants it read, each
tagged with the *version*: a random value in the shared store (Redis) that anything
which can change them (a key or merchant saved or deleted, a key revoked) replaces.
Every call reads the version in the same round trip that counts its limits
(merchants.admission.admit); an entry tagged with another version is read again from the
database before the call goes on, and tagged with the version read *before* that read,
so a change made meanwhile is never hidden. A revoked key or a suspended merchant is
obeyed at the next request, in every process. Without the shared store (an outage),
nothing remembered is trusted; nothing is remembered longer than MAX_AGE.

The objects are shared by the requests a process serves: read them, never change them.
"""

import threading
import time
from collections.abc import Hashable

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from merchants.admission.store import store
from merchants.models import ApiKey, Merchant
from receco.lib import sharedcache

VERSION = "auth:version"
MAX_AGE = 60.0  # seconds


class Memory:
    """Objects by name, each with the version it was read under and when."""

    def __init__(self, max_entries: int = 10_000):
        self.max_entries = max_entries
        self._entries: dict[Hashable, tuple[object, str, float]] = {}
        self._lock = threading.Lock()

    def recall(self, name: Hashable, version: str | None = None) -> tuple[object, str] | None:
        """The object remembered under ``name`` and its version, if not older than MAX_AGE
        (and, when ``version`` is given, only if read under it)."""
        entry = self._entries.get(name)
        if entry is None or time.monotonic() - entry[2] > MAX_AGE:
            return None
        if version is not None and entry[1] != version:
            return None
        return entry[0], entry[1]

    def remember(self, name: Hashable, obj: object, version: str | None) -> None:
        """Remember ``obj``, read from the database under ``version`` (None: not at all)."""
        if version is None:
            return
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[name] = (obj, version, time.monotonic())

    def forget(self) -> None:
        with self._lock:
            self._entries.clear()


keys = Memory()  # lookup id -> ApiKey (with its merchant)
merchants = Memory()  # string id -> Merchant
merchants_by_id = Memory()  # id -> Merchant: the identity a receipt states (merchants.sales.issuer)


def changed(**kwargs) -> None:
    """Make every process read its keys and merchants again: now, and once more when the
    transaction in progress commits (a process could read the old rows in between)."""
    _replace_version()
    transaction.on_commit(_replace_version)


def _replace_version() -> None:
    sharedcache.guarded("key invalidation", lambda: store().replace_version(VERSION), None)


def forget() -> None:
    """Forget everything remembered (tests)."""
    keys.forget()
    merchants.forget()
    merchants_by_id.forget()


def connect_signals() -> None:
    """Replace the version whenever a key or a merchant is saved or deleted (MerchantsConfig.ready)."""
    for model in (ApiKey, Merchant):
        post_save.connect(changed, sender=model, dispatch_uid=f"admission-{model.__name__}-save")
        post_delete.connect(changed, sender=model, dispatch_uid=f"admission-{model.__name__}-delete")
