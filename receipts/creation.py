"""Turning a sale into a receipt: idempotency, short-code collisions, and the rule that a
keyed sale always lands on its token. Which merchant it is for, and who may make it, is
merchants.sales; writing the row (and what other apps add to it) is receipts.writer."""

from dataclasses import dataclass, field
from datetime import timedelta

from django.db import IntegrityError
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

    The token is the idempotency key: the same token with the same content returns the
    original receipt with ``created`` False, even when both requests race (the unique
    constraint decides, not a read before the write). A requested short code that another
    receipt holds is replaced by a fresh one. A keyed sale always gets its token, and its
    short code when it was claimed after the sale: a receipt made without a key that holds
    them is set aside, within its own merchant only. Who may claim a token or short code at
    all is receipts.claims. Raises Conflict when the token is already used for different
    content by a keyed sale or another merchant's, or by anyone when this sale is not
    keyed, or was made offline with another merchant's key; InvalidInput when a signed
    token's MAC does not match. A failed call writes nothing.
    """
    check_token(sale["token"], merchant.pk, admission.key if admission is not None else None)
    values = _receipt_values(merchant, sale, livemode=livemode, keyed=keyed, admission=admission)
    for _ in range(writer.MAX_CODE_ATTEMPTS):
        try:
            written = writer.insert_sale(merchant, values, keyed=keyed)
        except IntegrityError:
            replay = _after_collision(merchant, sale, values, admission)
            if replay is not None:
                return replay
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


def _after_collision(merchant: Merchant, sale: dict, values: dict, admission: Admission | None) -> Created | None:
    """Decide what a sale whose INSERT met a unique token or short code comes to: the
    receipt stored before, for a replay; None to try again (``values`` given a fresh
    short code, or the receipt of this merchant made without a key that held what this
    keyed sale claims set aside). Raises Conflict when the token is another sale's."""
    keyed, token, short_code = values["keyed"], values["token"], values["short_code"]
    holder = Receipt.objects.filter(token=token).first()
    if holder is None:  # the short code was taken, not the token
        if keyed and _set_aside(_claim_on(short_code, sale, merchant), "short code"):
            return None
        if short_code == sale["short_code"] and admission is not None:
            admission.record_failed_lookup()  # the answer tells the caller this code exists
        values["short_code"] = new_short_code()
        return None
    if holder.fingerprint == values["fingerprint"] and _same_merchant(holder, merchant):
        if keyed and not holder.keyed:  # the same sale, sent before without the key
            writer.mark_keyed(holder)
        return Created(holder, False)
    if keyed and holder.merchant_id == merchant.pk and _set_aside(holder, "token"):
        return None
    raise Conflict(TOKEN_CONFLICT)


def _same_merchant(receipt: Receipt, merchant: Merchant) -> bool:
    if merchant.pk is not None:
        return receipt.merchant_id == merchant.pk
    # A new test merchant: the same sale, racing, may have created it meanwhile.
    return Merchant.objects.filter(pk=receipt.merchant_id, string_id=merchant.string_id).exists()


def _claim_on(short_code: str, sale: dict, merchant: Merchant) -> Receipt | None:
    """The receipt of ``merchant`` made without a key that holds ``short_code`` if it was made
    after the sale it would shadow (see SHORT_CODE_CLAIM_LEEWAY), else None. Another
    merchant's receipt is never set aside: what a link opens never changes across merchants."""
    if merchant.pk is None:
        return None
    sold_at = sale["transaction_date"] or timezone.now()
    return Receipt.objects.filter(
        short_code=short_code, merchant_id=merchant.pk, keyed=False, created_at__gte=sold_at - SHORT_CODE_CLAIM_LEEWAY
    ).first()


def _set_aside(holder: Receipt | None, claimed: str) -> bool:
    """Whether ``holder``, a receipt made without its merchant's key, was set aside so that
    a keyed sale can take what it claims; False (nothing changed) for none, or a keyed one:
    that is a sale of its own."""
    if holder is None or holder.keyed:
        return False
    return writer.set_aside(holder, claimed)
