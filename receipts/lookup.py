"""Finding a receipt by what customers and POS systems hold, a token or a short code: the
one look-up of getReceipt, updateReceiptContact and the customer pages.

Who may read a receipt does not depend on its merchant's record, so this is one indexed
query. Anyone may read any receipt by its token or short code (contact data is masked
for them, receipts.rendering.representation); a key reads only its own merchant's receipts, and
another merchant's is "not found" to it, exactly like a receipt that does not exist, so
a key does not tell its holder which codes exist. A test key reads only test receipts.
Short codes can be guessed: those that find nothing count against the client address
(merchants.admission.budget); tokens, which QR codes hold, cannot and never do.
"""

from merchants.admission.admit import Admission
from receco.errors import Forbidden, NotFound
from receco.lib import replicas
from receipts.codes import parse_reference
from receipts.models import Receipt

RECEIPT_NOT_FOUND = "Receipt not found"
TEST_KEY_ON_LIVE_RECEIPT = "A test key cannot access live receipts: use a live key"


def find_receipt(raw_reference: object, admission: Admission, *, replica: bool = False) -> Receipt:
    """Return the receipt a token or short code names (trimmed; short codes in any case),
    if ``admission``'s caller may have it. ``replica``: for reads that change nothing,
    which a read replica may serve (the primary still answers what it has not received).

    Raises InvalidInput ("Invalid token format"), NotFound ("Receipt not found"),
    Forbidden (a test key naming a live receipt) or RateLimited (too many short codes
    that found nothing from this address).
    """
    reference = parse_reference(raw_reference)
    if reference.is_short_code:
        admission.check_lookup_budget()
    try:
        if replica:
            receipt = replicas.read(
                lambda alias: Receipt.objects.by_reference(reference, using=alias), name=reference.value
            )
        else:
            receipt = Receipt.objects.by_reference(reference)
    except Receipt.DoesNotExist:
        receipt = None
    if receipt is None or (admission.key is not None and not admission.speaks_for(receipt.merchant_id)):
        if reference.is_short_code:
            admission.record_failed_lookup()
        raise NotFound(RECEIPT_NOT_FOUND)
    if admission.key is not None and not admission.key.is_live and receipt.livemode:
        raise Forbidden(TEST_KEY_ON_LIVE_RECEIPT)
    return receipt
