"""Who may do what through the API (CONTRACT.md, "Merchants, keys and who may do what").

A Caller is whoever sent a request: an API key (with its merchant), or nobody known,
counted by client address. The rules:

- No key is fine, unless the merchant concerned has switched on "require API key" (401).
- A key acts only for its own merchant: creating, reading or updating another
  merchant's receipts is 403. A suspended merchant's key is 403 for everything.
- Test keys make test receipts and reach only test receipts; live keys reach all of
  their merchant's receipts.
- Contact data is shown in full only to the owning merchant's key.
"""

from dataclasses import dataclass, replace

from django.utils import timezone

from merchants import keycache, merchantcache, ratelimits, usage
from merchants.keys import authenticate, reauthenticate
from merchants.models import ApiKey, Merchant
from receco.errors import Forbidden, NotFound, Unauthorized
from receipts.codes import parse_reference
from receipts.lookup import RECEIPT_NOT_FOUND
from receipts.models import Receipt

KEY_REQUIRED = "API key required for this merchant"
OTHER_MERCHANTS_KEY = "API key belongs to another merchant"
TEST_KEY_ON_LIVE_RECEIPT = "A test key cannot access live receipts: use a live key"


@dataclass(frozen=True)
class Caller:
    ip: str
    key: ApiKey | None = None
    # This window's failed look-ups, read when the call was admitted (None: not read).
    failed_lookups: dict | None = None
    # The version of keys and merchants (merchants.keycache) the call read when admitted.
    version: object = None

    @property
    def livemode(self) -> bool:
        """Whether receipts this caller creates are live (a merchant's test flag aside)."""
        return self.key is None or self.key.is_live


def identify(authorization: str | None, ip: str) -> Caller:
    """Return the caller an Authorization header and client address make.

    Raises Unauthorized (bad key), Forbidden (suspended merchant), or RateLimited when
    the address has sent too many requests without a usable key.
    """
    now = timezone.now()
    try:
        key = authenticate(authorization, now, remembered=keycache.recall)
    except Unauthorized:
        # A failed key counts against the address like any call without a key, so keys
        # cannot be guessed faster than anonymous callers may call.
        ratelimits.charge(Caller(ip))
        raise
    if key is not None:
        keycache.remember(key)
        usage.note_key_used(key, now)
    return Caller(ip, key)


def admit(caller: Caller) -> tuple[Caller, ratelimits.RateState | None]:
    """Count one procedure call: rate limits (raises RateLimited) and key usage, in one
    round trip to the shared cache that also reads the caller's failed look-ups.

    Returns the caller with those look-ups, and where a live key stands.
    """
    extra = [usage.call_counter(caller.key)] if caller.key is not None else []
    state, failed_lookups, version = ratelimits.charge_call(caller, extra, keycache.version_token())
    caller = replace(caller, failed_lookups=failed_lookups, version=version)
    if caller.key is not None and not keycache.is_current(caller.key, version):
        # Keys or merchants changed since this key was read (or the cache cannot say):
        # read it again before the call runs.
        try:
            key = reauthenticate(caller.key)
        except Unauthorized:
            ratelimits.charge(Caller(caller.ip))
            raise
        keycache.remember(key, version)
        caller = replace(caller, key=key)
    return caller, state


def authorize_merchant_id(caller: Caller, string_id: str) -> None:
    """Refuse (Forbidden) a key that names another merchant, before anything is looked up."""
    if caller.key is not None and caller.key.merchant.string_id != string_id:
        raise Forbidden(OTHER_MERCHANTS_KEY)


def authorize_merchant(caller: Caller, merchant: Merchant) -> None:
    """Raise Forbidden for another merchant's key, Unauthorized when a required key is missing."""
    if caller.key is None:
        if merchant.require_api_key:
            raise Unauthorized(KEY_REQUIRED)
    elif caller.key.merchant_id != merchant.pk:
        raise Forbidden(OTHER_MERCHANTS_KEY)


def _authorize_receipt(caller: Caller, receipt: Receipt) -> None:
    authorize_merchant(caller, receipt.merchant)
    if caller.key is not None and not caller.key.is_live and receipt.livemode:
        raise Forbidden(TEST_KEY_ON_LIVE_RECEIPT)


def receipt_for(caller: Caller, raw_reference: object) -> Receipt:
    """Return the receipt a token or short code names, if ``caller`` may have it.

    One indexed query: the receipt's merchant is the key's own, or one this process
    remembers (merchants.merchantcache) while it has not changed. A reference that gives
    the caller nothing (no such receipt, or not theirs) counts as a failed look-up; too
    many of them raise RateLimited. Raises InvalidInput, NotFound, Unauthorized or
    Forbidden.
    """
    reference = parse_reference(raw_reference)
    ratelimits.check_lookup_budget(caller)
    try:
        try:
            receipt = Receipt.objects.by_reference(reference)
        except Receipt.DoesNotExist:
            raise NotFound(RECEIPT_NOT_FOUND) from None
        receipt.merchant = _merchant(caller, receipt.merchant_id)
        _authorize_receipt(caller, receipt)
    except (NotFound, Unauthorized, Forbidden):
        ratelimits.record_failed_lookup(caller)
        raise
    return receipt


def sale_merchant(caller: Caller, string_id: str, display_name: str | None) -> Merchant:
    """The merchant a sale names (``Merchant.objects.for_sale``): the key's own, or one
    this process remembers while it has not changed. Raises Merchant.DoesNotExist."""
    if caller.key is not None and caller.key.merchant.string_id == string_id:
        return caller.key.merchant  # read with the key, under the same version
    return merchantcache.for_sale(string_id, display_name, caller.version)


def _merchant(caller: Caller, merchant_id: int) -> Merchant:
    if caller.key is not None and caller.key.merchant_id == merchant_id:
        return caller.key.merchant  # read with the key, under the same version
    return merchantcache.merchant(merchant_id, caller.version)


def may_see_contact(caller: Caller, receipt: Receipt) -> bool:
    """Only the owning merchant's key sees customer contact data unmasked."""
    return caller.key is not None and caller.key.merchant_id == receipt.merchant_id
