"""Turning a sale into a receipt: idempotency, short-code collisions, and the rules that
decide which sale holds a token or short code that two claim. Which merchant it is for, and
who may make it, is merchants.sales; writing the row (and what other apps add to it) is
receipts.writer.

Who gives way (docs/security.md, "Who may create a merchant's receipts"):

- Test mode is a world apart. A live sale always lands on its token and short code: a test
  receipt (a test key's, a ``test-`` merchant's, of any merchant) that holds them is set
  aside. A test sale never takes anything from a live receipt.
- Within one merchant and one mode, a sale sent with the merchant's key lands on its token,
  and on its short code when that was claimed after the sale: a receipt made without the
  key that holds them is set aside.
- Across live merchants nothing is ever set aside: a taken token is a conflict, a taken
  short code is replaced. What a live link opens never changes.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError
from django.db.models import Q
from django.utils import timezone

from merchants.admission.admit import Admission
from merchants.colors import HOUSE_ACCENT_COLOR
from merchants.models import Merchant
from receco.errors import Conflict
from receco.ops import metrics
from receipts import writer
from receipts.claims import check_token, requested_short_code
from receipts.codes import new_short_code, new_token
from receipts.models import Receipt
from receipts.numbering import series_name
from receipts.validation import sale_fingerprint

# A receipt made without a key that holds the short code a keyed sale asks for is set
# aside only if it was made after the sale (less this much, for tills' clocks): one made
# before cannot be a claim on the sale's printed slip, only a chance collision.
SHORT_CODE_CLAIM_LEEWAY = timedelta(hours=1)

TOKEN_CONFLICT = "Token already used for a different receipt"
# What a sale may give beyond its total, kept in Receipt.details when given.
SALE_DETAILS = ("subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details")


@dataclass(frozen=True)
class Created:
    """What storing a sale came to: the receipt, whether this call created it (False for
    an idempotent replay), and what the hooks added, by name (receipts.hooks: the
    deliveries its contact asked for are ``outcomes["deliveries"]``)."""

    receipt: Receipt
    created: bool
    outcomes: dict[str, object] = field(default_factory=dict)


def create_receipt(
    merchant: Merchant, sale: dict, *, livemode: bool = True, keyed: bool = False, admission: Admission | None = None
) -> Created:
    """Store a validated sale for ``merchant`` (saved here if it is a new test merchant),
    sent with the merchant's own API key or not (``keyed``), by the caller ``admission``
    admitted (its key and the failed-look-up budget of its address; None: not a caller of
    the API).

    The token is the idempotency key: the same token with the same content, in the same
    mode, returns the original receipt with ``created`` False, even when both requests race
    (the unique constraint decides, not a read before the write). A requested short code
    that another receipt holds is replaced by a fresh one, unless that receipt gives way
    (the module's rules): it is then set aside in the transaction that stores this sale, so
    that nothing can take them in between. Who may claim a token or short code at all is
    receipts.claims. Raises Conflict when the token is another sale's that does not give
    way, or was made offline with another merchant's key; InvalidInput when a signed
    token's MAC does not match. A failed call writes nothing.
    """
    check_token(sale["token"], merchant.pk, admission.key if admission is not None else None)
    values = _receipt_values(merchant, sale, livemode=livemode, keyed=keyed, admission=admission)
    displacing: list[tuple[Receipt, str]] = []
    for _ in range(writer.MAX_CODE_ATTEMPTS):
        try:
            written = writer.insert_sale(merchant, values, keyed=keyed, setting_aside=displacing)
        except IntegrityError:
            outcome = _after_collision(merchant, sale, values, admission)
            if isinstance(outcome, Created):
                return outcome
            displacing = outcome
            continue
        metrics.receipt_created(written.receipt.livemode)
        return Created(written.receipt, True, written.outcomes)
    raise RuntimeError(f"no free short code after {writer.MAX_CODE_ATTEMPTS} attempts")


def _receipt_values(
    merchant: Merchant, sale: dict, *, livemode: bool, keyed: bool, admission: Admission | None
) -> dict:
    """Every column of the sale's receipt but its merchant and number: the short code the
    one requested if the caller may have it tried (receipts.claims), else a fresh one; the
    series it is numbered in, its till's when it names one (receipts.numbering)."""
    # The merchant's name, logo and colour are its record's, unless it is a test-
    # merchant, which belongs to nobody and shows what its sales say.
    branded = sale if merchant.belongs_to_nobody else {}
    token = sale["token"] or new_token()
    may_probe = admission is None or admission.may_probe_short_codes()
    livemode = livemode and not merchant.is_test
    return {
        "token": token,
        "short_code": requested_short_code(sale["short_code"], token, may_probe=may_probe) or new_short_code(),
        "merchant_name": branded.get("merchant_name") or merchant.name,
        "merchant_logo": branded.get("merchant_logo") or merchant.logo_url or None,
        "accent_color": branded.get("accent_color") or merchant.accent_color or HOUSE_ACCENT_COLOR,
        "total_amount": sale["total_amount"],
        "currency": sale["currency"],
        "transaction_date": sale["transaction_date"] or timezone.now(),
        "items": sale["items"],
        "category": sale["category"],
        "payment_method": sale["payment_method"],
        "location": sale["location"],
        "status": sale["status"],
        "livemode": livemode,
        "keyed": keyed,
        "customer_email": sale["customer_email"],
        "customer_phone": sale["customer_phone"],
        # Without a number the choice means nothing (receipts.contacts).
        "customer_phone_channel": sale.get("customer_phone_channel") if sale["customer_phone"] else None,
        "details": {name: sale[name] for name in SALE_DETAILS if sale.get(name) is not None} or None,
        "fingerprint": sale_fingerprint(sale),
        "number_series": series_name(merchant, livemode=livemode, terminal_id=sale.get("terminal_id")),
    }


def _after_collision(
    merchant: Merchant, sale: dict, values: dict, admission: Admission | None
) -> Created | list[tuple[Receipt, str]]:
    """Decide what a sale whose INSERT met a unique token or short code comes to: the
    receipt stored before, for a replay; else the receipts that give way to it, each with
    what it claimed ("token" or "short code"), to set aside as the sale is stored again
    (``values`` given a fresh short code when its holder does not give way). Raises
    Conflict when the token is held by a sale that does not give way."""
    keyed, live, token, short_code = values["keyed"], values["livemode"], values["token"], values["short_code"]
    holders = list(Receipt.objects.filter(Q(token=token) | Q(short_code=short_code)))
    by_token = next((receipt for receipt in holders if receipt.token == token), None)
    by_code = next((receipt for receipt in holders if receipt.short_code == short_code), None)
    displacing = []
    if by_token is not None:
        if (
            by_token.fingerprint == values["fingerprint"]
            and by_token.livemode == live
            and _same_merchant(by_token, merchant)
        ):
            if keyed and not by_token.keyed:  # the same sale, sent before without the key
                writer.mark_keyed(by_token)
            return Created(by_token, False)
        if not _gives_way(by_token, merchant, keyed=keyed, live=live):
            raise Conflict(TOKEN_CONFLICT)
        displacing.append((by_token, "token"))
    if by_code is not None and by_code is not by_token:
        if _gives_way(by_code, merchant, keyed=keyed, live=live, claimed_since=_claims_since(sale)):
            displacing.append((by_code, "short code"))
        else:
            if short_code == sale["short_code"] and admission is not None:
                admission.record_failed_lookup()  # the answer tells the caller this code exists
            values["short_code"] = new_short_code()
    return displacing


def _gives_way(
    holder: Receipt, merchant: Merchant, *, keyed: bool, live: bool, claimed_since: datetime | None = None
) -> bool:
    """Whether ``holder`` gives up its token, or its short code (made since
    ``claimed_since``), to a sale of ``merchant`` in mode ``live``, sent with the
    merchant's key or not (``keyed``): a test receipt to any live sale; within one merchant
    and one mode, a receipt made without the key to a keyed sale. A live receipt never
    gives way to a test sale, nor to another merchant's."""
    if live and not holder.livemode:
        return True
    if not keyed or holder.keyed or holder.livemode != live or merchant.pk is None or holder.merchant_id != merchant.pk:
        return False
    return claimed_since is None or holder.created_at >= claimed_since


def _claims_since(sale: dict) -> datetime:
    """Since when a receipt holding the short code a keyed sale asks for may be a claim on
    it (SHORT_CODE_CLAIM_LEEWAY): one made before cannot have copied its printed slip."""
    return (sale["transaction_date"] or timezone.now()) - SHORT_CODE_CLAIM_LEEWAY


def _same_merchant(receipt: Receipt, merchant: Merchant) -> bool:
    if merchant.pk is not None:
        return receipt.merchant_id == merchant.pk
    # A new test merchant: the same sale, racing, may have created it meanwhile.
    return Merchant.objects.filter(pk=receipt.merchant_id, string_id=merchant.string_id).exists()
