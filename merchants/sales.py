"""Which merchant a sale is for, and whether a caller may create, refund or void that
merchant's receipts: the one merchant resolution of createReceiptFromPOS, and the rule of
refundReceipt and voidReceipt."""

from merchants.admission import limits, memory
from merchants.admission.admit import Admission
from merchants.models import Merchant
from receco.errors import Forbidden, NotFound, Unauthorized

MERCHANT_NOT_FOUND = "Merchant not found"
KEY_REQUIRED = "API key required for this merchant"
OTHER_MERCHANTS_KEY = "API key belongs to another merchant"


def merchant_for_sale(admission: Admission, string_id: str, display_name: str | None = None) -> Merchant:
    """The active merchant a validated sale names, if ``admission``'s caller may create its
    receipts. A new ``test-`` merchant is returned unsaved (receipts.creation saves it with
    the receipt) and counted against the caller's address.

    The rules: a key acts only for its own merchant (Forbidden, before anything is looked
    up); a merchant that requires a key refuses a call without one (Unauthorized); a
    suspended merchant takes no sales (Forbidden). Raises NotFound for an unknown merchant
    that is not a ``test-`` one, and RateLimited for too many new test merchants.
    """
    key = admission.key
    if key is not None:
        if key.merchant.string_id != string_id:
            raise Forbidden(OTHER_MERCHANTS_KEY)
        merchant = key.merchant  # read with the key, under the same version
    else:
        merchant = _find(string_id, display_name, admission.version)
        if merchant.pk is None:
            limits.charge_new_test_merchant(admission.ip)
        if merchant.require_api_key:
            raise Unauthorized(KEY_REQUIRED)
    merchant.check_active()
    return merchant


def _find(string_id: str, display_name: str | None, version: str | None) -> Merchant:
    """The merchant, remembered under ``version`` or read now (and remembered)."""
    remembered = memory.merchants.recall(string_id, version) if version is not None else None
    if remembered is not None:
        return remembered[0]
    try:
        merchant = Merchant.objects.for_sale(string_id, display_name)
    except Merchant.DoesNotExist:
        raise NotFound(MERCHANT_NOT_FOUND) from None
    if merchant.pk is not None:  # a new test merchant is saved with its first receipt
        memory.merchants.remember(string_id, merchant, version)
    return merchant


def issuer(merchant_id: int, version: str | None) -> Merchant:
    """The merchant with this id, as its record is now (the identity its receipts state:
    getReceipt's registration number), remembered under ``version`` or read now (and
    remembered): no query on most calls. For reading only.

    Raises Merchant.DoesNotExist."""
    remembered = memory.merchants_by_id.recall(merchant_id, version) if version is not None else None
    if remembered is not None:
        return remembered[0]
    merchant = Merchant.objects.get(pk=merchant_id)
    memory.merchants_by_id.remember(merchant_id, merchant, version)
    return merchant


def saved_test_merchant(merchant: Merchant) -> Merchant:
    """``merchant``, a new test merchant of ``merchant_for_sale``, saved (with its sale's
    receipt, in that transaction); the one saved meanwhile by a racing first sale of it
    if there is one."""
    saved, _ = Merchant.objects.get_or_create(
        string_id=merchant.string_id,
        defaults={"name": merchant.name, "is_test": True, "require_api_key": False},
    )
    return saved


def authorize_changes(admission: Admission, merchant: Merchant) -> None:
    """Whether ``admission``'s caller may refund or void receipts of ``merchant``: only with
    its key, except for ``test-`` merchants, which belong to nobody (their receipts are test
    receipts). Raises Unauthorized, or Forbidden for another merchant's key."""
    if admission.key is not None:
        if not admission.speaks_for(merchant.pk):
            raise Forbidden(OTHER_MERCHANTS_KEY)
    elif not merchant.belongs_to_nobody:
        raise Unauthorized(KEY_REQUIRED)
