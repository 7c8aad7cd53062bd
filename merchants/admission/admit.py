"""Admitting a call: who makes it, whether its limits let it through, what it may read.

``admit`` is the one place a procedure call is admitted. It reads the caller's key (a
key this process remembers is proved by its digest alone), then makes the call's one
round trip to the store: the key's or the address's limits counted, the key's usage for
the day added, the address's failed look-ups and the shared version read. A key not
remembered under that version is read from the database (merchants.admission.memory).
The answer is an Admission, which the procedures, the receipt look-up and the sale's
merchant resolution read; pages have one for their client address (``for_address``).
"""

from datetime import datetime
from typing import NamedTuple

from django.utils import timezone

from merchants import api_actor, keys, usage
from merchants.admission import budget, limits, memory
from merchants.admission.store import store
from merchants.models import ApiKey
from receco.errors import Unauthorized
from receco.lib import sharedcache

KEY_WHO = "for this API key"


class Admission(NamedTuple):  # made for every call: a tuple is made fastest
    """A caller let through: the client address, its key if it sent one, and what its
    admission read: the shared version (None when the store could not say), where a
    live key stands against its limits (``rate_state``), and the address's failed
    look-ups so far (None: not read)."""

    ip: str
    key: ApiKey | None = None
    version: str | None = None
    rate_state: limits.RateState | None = None
    failed_lookups: int | None = None

    @classmethod
    def for_address(cls, ip: str) -> "Admission":
        """A page's visitor: no key, no call counted; its failed look-ups read when needed."""
        return cls(ip)

    @property
    def livemode(self) -> bool:
        """Whether the receipts this caller creates are live (a merchant's test flag aside)."""
        return self.key is None or self.key.is_live

    def speaks_for(self, merchant_id: int) -> bool:
        """Whether the caller holds the key of merchant ``merchant_id``."""
        return self.key is not None and self.key.merchant_id == merchant_id

    def check_lookup_budget(self) -> None:
        """Raise RateLimited if this address has used up its failed look-ups."""
        budget.check(self.ip, self.failed_lookups)

    def record_failed_lookup(self) -> None:
        budget.record(self.ip)

    def may_probe_short_codes(self) -> bool:
        """Whether this address may still learn that a short code exists (its failed
        look-ups are not used up): a requested code found taken tells it as much."""
        return not budget.spent(self.ip, self.failed_lookups)


def admit(authorization: str | None, ip: str, now: datetime | None = None) -> Admission:
    """Admit one call with this Authorization header from client address ``ip``.

    Raises Unauthorized (a malformed, unknown, revoked or expired key; the call is then
    counted against the address, so keys cannot be guessed faster than anyone may call),
    Forbidden (a suspended merchant's key) or limits.RateLimitExceeded.
    """
    try:
        text = keys.key_from_header(authorization)
        remembered, presented = _presented(text) if text is not None else (None, None)
    except Unauthorized:
        limits.charge_anonymous(ip)
        raise
    moment = limits.clock()
    if presented is None:
        counted = limits.windows(limits.ANONYMOUS, ip, limits.rates("RECECO_RATELIMIT_ANONYMOUS"), moment)
    elif presented.type == ApiKey.Type.LIVE:
        live = limits.rates("RECECO_RATELIMIT_LIVE_KEY")
        counted = limits.windows(limits.LIVE_KEY, presented.lookup_id, live, moment)
    else:
        counted = []  # test keys are not limited
    extra = [budget.window(ip, moment).count]
    if presented is not None:
        now = now or timezone.now()
    if remembered is not None:
        extra.append(usage.call_counter(remembered[0].pk, now))
    answer = sharedcache.guarded(
        "rate limiting", lambda: store().count([*(w.count for w in counted), *extra], memory.VERSION), None
    )
    values, version = answer if answer is not None else ([], None)
    key = _current_key(presented, remembered, version, ip, now) if presented is not None else None
    if key is not None:
        api_actor.key_used(key.prefix)  # the audit trail's actor for a refund or void
    if answer is None:  # the store is down: the limits fail open
        return Admission(ip, key)
    who = KEY_WHO if key is not None else limits.ANONYMOUS_WHO
    state = limits.judge(counted, values, who, advertise=key is not None and key.is_live)
    return Admission(ip, key, version, state, values[len(counted)])


def _presented(text: str) -> tuple[tuple[ApiKey, str] | None, keys.Presented]:
    """The key this process remembers as ``text`` (with its version), and ``text`` read as a key.

    Raises Unauthorized for a malformed key, or a remembered lookup id with another secret
    (refused without a query)."""
    lookup_id = keys.lookup_id_of(text)
    remembered = memory.keys.recall(lookup_id) if lookup_id else None
    if remembered is not None:
        if keys.proves(text, remembered[0]):  # the digest proves format and checksum too
            return remembered, keys.Presented(text, remembered[0].type, lookup_id)
        keys.parse_key(text)  # a broken checksum is still "malformed"
        raise Unauthorized(keys.INVALID_KEY)
    return None, keys.parse_key(text)


def _current_key(presented, remembered, version, ip: str, now: datetime) -> ApiKey:
    """The key as the database has it now: remembered under ``version``, or read again.
    Raises like ``admit``."""
    try:
        if remembered is not None and version is not None and remembered[1] == version:
            api_key = remembered[0]
        else:
            api_key = keys.stored_key(presented)
            keys.learn_token_secret(api_key, presented.text)
            memory.keys.remember(presented.lookup_id, api_key, version)
            if remembered is None:  # its usage was not counted in the round trip
                usage.count_call(api_key, now)
        keys.check_usable(api_key, now)
    except Unauthorized:
        limits.charge_anonymous(ip)
        raise
    api_key.note_used(now)
    return api_key
