"""Who may do what through the API (README, "Merchants, API keys and the admin").

A Caller is whoever sent a request: an API key (with its merchant), or nobody known,
counted by client address. The rules:

- Creating a merchant's receipts needs that merchant's key when the merchant requires
  one (401 without; every registered merchant does unless its owner switched it off).
  Reading a receipt by its token or short code, and attaching a contact to it, need no
  key: customers do both.
- A key acts only for its own merchant: creating another merchant's receipts is 403;
  another merchant's receipt is "not found" to it, as to anyone who names a receipt
  that does not exist. A suspended merchant's key is 403 for everything.
- Test keys make test receipts and reach only test receipts; live keys reach all of
  their merchant's receipts.
- Contact data is shown in full only to the owning merchant's key.
- Short codes can be guessed, so short codes that find nothing count against the
  client address (never against a key, which anyone may bring several of); too many
  and that address's short-code look-ups answer 429 for a while. Tokens, which the QR
  codes hold, cannot be guessed and are never refused.
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
    """Whether ``caller`` may create receipts of ``merchant``: raise Forbidden for another
    merchant's key, Unauthorized when the merchant requires a key and none was sent."""
    if caller.key is None:
        if merchant.require_api_key:
            raise Unauthorized(KEY_REQUIRED)
    elif caller.key.merchant_id != merchant.pk:
        raise Forbidden(OTHER_MERCHANTS_KEY)


def receipt_for(caller: Caller, raw_reference: object) -> Receipt:
    """Return the receipt a token or short code names, if ``caller`` may have it.

    One indexed query: who may read a receipt does not depend on its merchant's record.
    Another merchant's receipt is NotFound to a key, exactly like a receipt that does
    not exist. A short
    code that gives the caller nothing counts against its address; too many of them
    raise RateLimited. Raises InvalidInput, NotFound, Forbidden (a test key naming a
    live receipt) or RateLimited.
    """
    reference = parse_reference(raw_reference)
    if reference.is_short_code:
        ratelimits.check_lookup_budget(caller)
    try:
        try:
            receipt = Receipt.objects.by_reference(reference)
        except Receipt.DoesNotExist:
            raise NotFound(RECEIPT_NOT_FOUND) from None
        if caller.key is not None and caller.key.merchant_id != receipt.merchant_id:
            raise NotFound(RECEIPT_NOT_FOUND)
    except NotFound:
        if reference.is_short_code:
            ratelimits.record_failed_lookup(caller)
        raise
    if caller.key is not None and not caller.key.is_live and receipt.livemode:
        raise Forbidden(TEST_KEY_ON_LIVE_RECEIPT)
    return receipt


def sale_merchant(caller: Caller, string_id: str, display_name: str | None) -> Merchant:
    """The merchant a sale names (``Merchant.objects.for_sale``): the key's own, or one
    this process remembers while it has not changed. A ``test-`` merchant the sale would
    create is counted against the caller's address (RECECO_RATELIMIT_TEST_MERCHANTS).

    Raises Merchant.DoesNotExist, or RateLimited when the address made too many."""
    if caller.key is not None and caller.key.merchant.string_id == string_id:
        return caller.key.merchant  # read with the key, under the same version
    merchant = merchantcache.for_sale(string_id, display_name, caller.version)
    if merchant.pk is None:
        ratelimits.charge_new_test_merchant(caller.ip)
    return merchant


def may_see_contact(caller: Caller, receipt: Receipt) -> bool:
    """Only the owning merchant's key sees customer contact data unmasked."""
    return caller.key is not None and caller.key.merchant_id == receipt.merchant_id
