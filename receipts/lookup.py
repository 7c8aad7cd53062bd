"""Finding receipts by what customers and POS systems hold: a token or a short code."""

from receco.errors import NotFound
from receipts.codes import parse_reference
from receipts.models import Receipt

RECEIPT_NOT_FOUND = "Receipt not found"


def find_receipt(raw_reference: object) -> Receipt:
    """Return the receipt for a token or short code (trimmed; short codes in any case).

    Raises InvalidInput ("Invalid token format") or NotFound ("Receipt not found").
    """
    reference = parse_reference(raw_reference)
    try:
        return Receipt.objects.by_reference(reference)
    except Receipt.DoesNotExist:
        raise NotFound(RECEIPT_NOT_FOUND) from None
