"""API keys remembered by each process between requests, checked against a shared token.

Authenticating a key costs a database query, as much as the look-up the request is
for. So a process remembers the keys it has authenticated, each tagged with the
*version*, a random token in the shared cache, as it was before the key was read from
the database. Anything that can change the outcome of authentication (an API key or a
merchant saved or deleted, a key revoked) replaces the version. Every procedure call
reads the version in the same Redis round trip that counts its rate limits
(merchants.access.admit); a key tagged with another version, or with none, is read
again from the database before the call runs. So a revoked key stops working with the
next request, in every process, as without this memory.

If the shared cache cannot be reached, nothing remembered is trusted. A key is never
remembered longer than MAX_AGE, whatever the version says.
"""

import secrets
import time

from django.core.cache import caches
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from merchants import sharedcache
from merchants.models import ApiKey, Merchant

VERSION = "auth:version"
MAX_AGE = 60.0  # seconds
MAX_KEYS = 10_000

# lookup id -> (the ApiKey, the version it was read under, when it was read). This
# process's own copies of database rows, never shared state: the version is what's shared.
_remembered: dict[str, tuple[ApiKey, object, float]] = {}
_last_version: object = None


def version_token() -> tuple[str, str]:
    """The shared entry each call reads, and the value it takes if it is missing."""
    return VERSION, secrets.token_hex(8)


def recall(lookup_id: str) -> ApiKey | None:
    """The key remembered under ``lookup_id``, if it is not too old (to be checked by ``is_current``)."""
    entry = _remembered.get(lookup_id)
    if entry is None or time.monotonic() - entry[2] > MAX_AGE:
        return None
    return entry[0]


def remember(api_key: ApiKey, version: object = None) -> None:
    """Remember a key just read from the database, tagged with ``version`` (by default the
    last version this process saw, which was read before the key was)."""
    entry = _remembered.get(api_key.lookup_id)
    if entry is not None and entry[0] is api_key and version is None:
        return  # recalled, not read again: keep its tag
    if len(_remembered) >= MAX_KEYS:
        _remembered.clear()
    _remembered[api_key.lookup_id] = (api_key, version or _last_version, time.monotonic())


def is_current(api_key: ApiKey, version: object) -> bool:
    """Whether ``api_key`` was read under ``version``, the one the call just read (and
    note that version as the last one seen)."""
    global _last_version
    _last_version = version
    entry = _remembered.get(api_key.lookup_id)
    return version is not None and entry is not None and entry[0] is api_key and entry[1] == version


def changed(**kwargs) -> None:
    """Make every process read its keys again: now, and once more when the transaction
    in progress commits (a process could read the old rows in between)."""
    _new_version()
    transaction.on_commit(_new_version)


def _new_version() -> None:
    sharedcache.guarded("key invalidation", _set_version, None)


def _set_version() -> None:
    # Stored as the counting script stores it (merchants.ratelimits): plain text in
    # Redis, not pickled by the cache API. The value is compared, never read as text.
    cache = caches["default"]
    client = sharedcache.redis_client()
    if client is None:
        cache.set(VERSION, secrets.token_hex(8), timeout=None)
    else:
        client.set(cache.make_key(VERSION), secrets.token_hex(8))


def forget() -> None:
    """Forget every remembered key (tests)."""
    global _last_version
    _remembered.clear()
    _last_version = None


for model in (ApiKey, Merchant):
    post_save.connect(changed, sender=model, dispatch_uid=f"keycache-{model.__name__}-save")
    post_delete.connect(changed, sender=model, dispatch_uid=f"keycache-{model.__name__}-delete")
