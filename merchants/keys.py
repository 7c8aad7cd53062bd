"""API keys: format, digest, issue, rotation, revocation, and proving a presented key.

A key is ``postest_`` or ``poslive_``, then 12 characters of public lookup id, 32 of
secret and 6 of checksum, all base62, 58 characters in all::

    poslive_3kTq9ZxW1bNa  Xk2…(32)…  0aZ9Qc
    └ prefix (shown) ───┘ └ secret ┘  └ CRC32 of everything before it

The secret carries 190 random bits. The checksum lets a mistyped or invented key be
refused before any database look-up (and lets secret scanners recognise real keys).
Only the lookup id and an HMAC-SHA256 digest of the whole key are stored; a request's
key is found by the indexed lookup id and compared in constant time. Keys are random
and long, so a fast keyed digest is as safe as a slow password hash and costs
microseconds instead of hundreds of milliseconds per request.
"""

import hashlib
import hmac
import os
import re
import secrets
import string
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.db import IntegrityError, transaction
from django.dispatch import receiver
from django.utils import timezone
from django.utils.crypto import salted_hmac

from merchants.admission import memory
from merchants.models import ApiKey, Merchant
from receco.errors import Unauthorized
from receco.lib.lookups import Lookup

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
LOOKUP_LENGTH = 12
SECRET_LENGTH = 32
CHECKSUM_LENGTH = 6
KEY_RE = re.compile(
    rf"^pos(?P<type>test|live)_(?P<lookup>[0-9A-Za-z]{{{LOOKUP_LENGTH}}})"
    rf"[0-9A-Za-z]{{{SECRET_LENGTH}}}(?P<checksum>[0-9A-Za-z]{{{CHECKSUM_LENGTH}}})$"
)
KEY_LENGTH = len("postest_") + LOOKUP_LENGTH + SECRET_LENGTH + CHECKSUM_LENGTH
LOOKUP_START = len("postest_")
PREFIX_RE = re.compile(rf"^pos(?P<type>test|live)_(?P<lookup>[0-9A-Za-z]{{{LOOKUP_LENGTH}}})$")

# What public SDKs send when their key setting is empty: `Bearer ${apiKey}` with an
# undefined or null key. None of them can be a key, so they mean "no key", not a bad one.
NO_KEY_PLACEHOLDERS = {"", "undefined", "null"}

MAX_GRACE = timedelta(days=30)
DEFAULT_GRACE = timedelta(hours=24)

# Says what a key looks like and where one comes from: the public SDKs' READMEs show
# placeholders such as "test-key", which their users send as they are. Clients and docs
# match on the "Malformed API key" prefix; it stays.
MALFORMED_KEY = (
    f"Malformed API key: a key is {KEY_LENGTH} characters starting with postest_ (test) or poslive_ (live), "
    "sent as 'Authorization: Bearer <key>'. A merchant's owner makes one in the dashboard "
    "(/admin/, Merchants > API keys > Create a key); the operator with 'manage.py createapikey'"
)
UNSUPPORTED_SCHEME = "Unsupported Authorization scheme: send 'Authorization: Bearer <API key>'"
INVALID_KEY = "Invalid API key"
REVOKED_KEY = "API key has been revoked"
EXPIRED_KEY = "API key has expired"


class KeyStateError(ValueError):
    """The key is in no state for this operation (rotating a revoked key, ...)."""


@dataclass(frozen=True)
class IssuedKey:
    """A freshly made key: the stored record and the full key, which exists only here."""

    api_key: ApiKey
    key: str


def _base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, rest = divmod(number, 62)
        digits.append(BASE62[rest])
    return "".join(reversed(digits)).rjust(width, BASE62[0])


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), CHECKSUM_LENGTH)


def _random(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def generate_key(key_type: str) -> str:
    """Return a new random key string of ``key_type`` ("test" or "live")."""
    body = f"pos{key_type}_{_random(LOOKUP_LENGTH)}{_random(SECRET_LENGTH)}"
    return body + _checksum(body)


def well_formed(key: str) -> re.Match | None:
    """Return the parsed key if it has the format and a correct checksum, else None."""
    match = KEY_RE.match(key)
    if match is None or not hmac.compare_digest(match["checksum"], _checksum(key[:-CHECKSUM_LENGTH])):
        return None
    return match


DIGEST_SALT = "receco.merchants.ApiKey"


def key_digest(key: str) -> str:
    """HMAC-SHA256 of the whole key under RECECO_API_KEY_SECRET (by default SECRET_KEY),
    as Django's ``salted_hmac`` makes it. (Deriving its key once per process instead saved
    0.2 µs a call, measured: not worth a copy of Django's code.)"""
    secret = settings.RECECO_API_KEY_SECRET or settings.SECRET_KEY
    return salted_hmac(DIGEST_SALT, key, secret=secret, algorithm="sha256").hexdigest()


TOKEN_SECRET_LABEL = b"receco/agent-token/v1"


def token_secret(key: str) -> str:
    """The secret with which the holder of ``key`` signs the receipt tokens it makes offline
    (the Receco agent: posagent's tokens.py), hex: HMAC-SHA256 keyed by the key itself, so
    the agent needs nothing but its key. Stored with the key (``ApiKey.token_secret``); it
    proves nothing about the key, whose digest stays the only way to check one."""
    return hmac.digest(key.encode(), TOKEN_SECRET_LABEL, "sha256").hex()


def learn_token_secret(api_key: ApiKey, key: str) -> None:
    """Store ``key``'s token secret on ``api_key`` if it was made before keys had one: such a
    key's tokens can be checked from the first request it makes (one UPDATE, once)."""
    if api_key.token_secret:
        return
    api_key.token_secret = token_secret(key)
    ApiKey.objects.filter(pk=api_key.pk, token_secret="").update(token_secret=api_key.token_secret)


def save_new_key(api_key: ApiKey) -> str:
    """Give an unsaved ApiKey (merchant, type and name set) a fresh key and store it;
    return the key, whose only copy this is."""
    if api_key.type not in ApiKey.Type.values:
        raise ValueError(f"key type must be test or live, not {api_key.type!r}")
    for _ in range(5):
        key = generate_key(api_key.type)
        api_key.lookup_id = KEY_RE.match(key)["lookup"]
        api_key.digest = key_digest(key)
        api_key.token_secret = token_secret(key)
        try:
            with transaction.atomic():
                api_key.save()
        except IntegrityError:  # a lookup id drawn twice in 62**12: draw again
            continue
        return key
    raise RuntimeError("could not draw a free key lookup id")


def issue_key(merchant: Merchant, key_type: str, name: str = "") -> IssuedKey:
    """Make and store a new key for ``merchant``; the returned ``key`` is its only copy."""
    api_key = ApiKey(merchant=merchant, type=key_type, name=name)
    return IssuedKey(api_key, save_new_key(api_key))


def parse_grace(text: str) -> timedelta:
    """Read a grace period such as ``24h``, ``30m``, ``2d``, ``90s`` or ``0``.

    Raises ValueError saying what is accepted.
    """
    match = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text or "")
    if match is None or (match[2] == "" and match[1] != "0"):
        raise ValueError(f"grace must look like 24h, 30m, 2d or 0, not {text!r}")
    seconds = int(match[1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 0}[match[2]]
    grace = timedelta(seconds=seconds)
    if grace > MAX_GRACE:
        raise ValueError(f"grace must be at most {MAX_GRACE.days} days")
    return grace


def rotate_key(api_key: ApiKey, grace: timedelta = DEFAULT_GRACE, now: datetime | None = None) -> IssuedKey:
    """Replace an active key: return a new key of the same merchant, type and name; the old
    one keeps working for ``grace`` and then expires.

    Raises KeyStateError if the key is revoked, expired or already rotated.
    """
    now = now or timezone.now()
    if not timedelta(0) <= grace <= MAX_GRACE:
        raise ValueError(f"grace must be between 0 and {MAX_GRACE.days} days")
    with transaction.atomic():
        old = ApiKey.objects.select_for_update().get(pk=api_key.pk)
        state = old.state(now)
        if state != ApiKey.State.ACTIVE:
            raise KeyStateError(f"{old.prefix} is {ApiKey.State(state).label.lower()}: only active keys can be rotated")
        issued = issue_key(old.merchant, old.type, old.name)
        old.expires_at = now + grace
        old.rotated_to = issued.api_key
        old.save(update_fields=["expires_at", "rotated_to"])
    api_key.expires_at, api_key.rotated_to = old.expires_at, old.rotated_to
    return issued


def revoke_key(api_key: ApiKey, now: datetime | None = None) -> bool:
    """Revoke the key at once and for good; return False if it already was revoked."""
    from merchants import audit

    now = now or timezone.now()
    changed = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=now)
    if changed:
        memory.changed()  # update() sends no post_save
        api_key.revoked_at = now
        # Nor does django-auditlog see it: the trail is written here.
        audit.record_change(api_key, {"revoked_at": ["None", str(now)]})
    return bool(changed)


def find_key(key_or_prefix: str) -> ApiKey:
    """Return the stored key named by a full key or by its prefix (``poslive_3kTq9ZxW1bNa``),
    for operators' commands. Raises ApiKey.DoesNotExist or ValueError (neither form)."""
    value = key_or_prefix.strip()
    match = PREFIX_RE.match(value) or well_formed(value)
    if match is None:
        raise ValueError("give a full key or its prefix such as poslive_3kTq9ZxW1bNa")
    api_key = ApiKey.objects.select_related("merchant").get(lookup_id=match["lookup"], type=match["type"])
    if match.re is KEY_RE and not hmac.compare_digest(api_key.digest, key_digest(value)):
        raise ApiKey.DoesNotExist
    return api_key


def key_from_header(authorization: str | None) -> str | None:
    """Return the key an Authorization header carries, or None for no key.

    ``Bearer <key>`` (any case) and a bare ``<key>`` are accepted; an empty bearer and
    the SDKs' ``Bearer undefined``/``Bearer null`` count as no key. Raises Unauthorized
    for another scheme such as ``Basic …``.
    """
    value = (authorization or "").strip()
    scheme, _, rest = value.partition(" ")
    if scheme.lower() == "bearer":
        value = rest.strip()
    elif rest:
        raise Unauthorized(UNSUPPORTED_SCHEME)
    return None if value in NO_KEY_PLACEHOLDERS else value


class Presented(NamedTuple):
    """A key as a request presents it, well formed: its text, type and public lookup id."""

    text: str
    type: str
    lookup_id: str


def lookup_id_of(key: str) -> str | None:
    """The lookup id a key of the right length would have, without checking anything else:
    enough to find a remembered key, which ``proves`` then checks in full."""
    return key[LOOKUP_START : LOOKUP_START + LOOKUP_LENGTH] if len(key) == KEY_LENGTH else None


def proves(key: str, api_key: ApiKey) -> bool:
    """Whether ``key`` is the key stored as ``api_key``: its digest proves every character,
    the format and checksum included.

    A key that proved once is proved again by a process's own keyed BLAKE2b of it: one
    call into C instead of Django's salted HMAC (a sixth of a live key's admission). What
    is kept is a digest, as in the database, under a key that never leaves the process."""
    quick = hashlib.blake2b(key.encode(), key=_PROCESS_KEY).digest()
    proven = _proven.get(api_key.digest)
    if proven is not None:
        return hmac.compare_digest(proven, quick)
    if not hmac.compare_digest(api_key.digest, key_digest(key)):
        return False
    if len(_proven) >= MAX_PROVEN:
        _proven.clear()
    _proven[api_key.digest] = quick
    return True


# The keys that proved, by their stored digest: their quick digest. A stored digest is of
# one key only, whatever its row says now (revoked or expired keys are refused after).
_PROCESS_KEY = os.urandom(32)
_proven: dict[str, bytes] = {}
MAX_PROVEN = 10_000


@receiver(setting_changed)
def _forget_proofs(setting, **kwargs):
    if setting in ("RECECO_API_KEY_SECRET", "SECRET_KEY"):
        _proven.clear()


def parse_key(key: str) -> Presented:
    """Read a presented key; raise Unauthorized if it has not the format or the checksum."""
    match = well_formed(key)
    if match is None:
        raise Unauthorized(MALFORMED_KEY)
    return Presented(key, match["type"], match["lookup"])


# A key and its merchant, the look-up every keyed request makes (receco.lib.lookups).
_WITH_MERCHANT = Lookup(ApiKey, "lookup_id", related="merchant")


def stored_key(presented: Presented) -> ApiKey:
    """The stored key ``presented`` is, its merchant loaded: one indexed query.

    Raises Unauthorized when no stored key has that lookup id, type and digest."""
    try:
        api_key = _WITH_MERCHANT.get(presented.lookup_id)
    except ApiKey.DoesNotExist:
        raise Unauthorized(INVALID_KEY) from None
    if api_key.type != presented.type or not proves(presented.text, api_key):
        raise Unauthorized(INVALID_KEY)
    return api_key


def check_usable(api_key: ApiKey, now: datetime | None = None) -> None:
    """Raise Unauthorized for a revoked or expired key, Forbidden for a suspended merchant's."""
    state = api_key.state(now)
    if state == ApiKey.State.REVOKED:
        raise Unauthorized(REVOKED_KEY)
    if state == ApiKey.State.EXPIRED:
        raise Unauthorized(EXPIRED_KEY)
    api_key.merchant.check_active()
