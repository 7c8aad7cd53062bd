"""A receipt as plain data, the shape getReceipt answers (docs/api.md, "getReceipt"), built
from its fields' declaration (receipts.rendering.fields).

getReceipt is the hot path: the declaration is turned, once, into a template of the
answer's keys in order and one reader of every attribute the answer takes as it is; per
call only the values are read and the few that need it converted, no slower than a dict
written out by hand.
"""

from datetime import UTC, datetime
from operator import attrgetter

from merchants.models import Merchant
from receipts.contacts import mask_email, mask_phone
from receipts.models import Receipt
from receipts.rendering.documents import refund_share, title
from receipts.rendering.fields import (
    COLUMN,
    CONTACT,
    DETAIL,
    DETAILS,
    ISSUER,
    MOMENT,
    PAYMENT,
    PAYMENT_DETAILS,
    RECEIPT_FIELDS,
    TITLE,
)


def iso_utc(moment: datetime) -> str:
    """``2026-11-22T10:15:00.000Z``: UTC, milliseconds, a Z suffix."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"  # drops "+00:00"


def _named(*sources: str) -> tuple[str, ...]:
    return tuple(field.name for field in RECEIPT_FIELDS if field.source in sources)


# Every key in the declared order, each None until set; the fields read from an attribute.
_TEMPLATE = dict.fromkeys(field.name for field in RECEIPT_FIELDS)
_READ = _named(COLUMN, MOMENT, CONTACT)
_read = attrgetter(*(field.read_from for field in RECEIPT_FIELDS if field.name in _READ))
_MOMENTS = _named(MOMENT)
# Each contact field with its mask (a contact field declared without one fails here, at import).
_CONTACTS = {name: {"customer_email": mask_email, "customer_phone": mask_phone}[name] for name in _named(CONTACT)}
_DETAIL = _named(DETAIL)
_DETAILS = _named(DETAILS)
(_PAYMENT,) = _named(PAYMENT)
(_TITLE,) = _named(TITLE)
_ISSUER = tuple((field.name, field.read_from) for field in RECEIPT_FIELDS if field.source == ISSUER)


def receipt_data(receipt: Receipt, *, reveal_contact: bool = False, merchant: Merchant | None = None) -> dict:
    """Return every field of a receipt (receipts.rendering.fields: the first 19 those every client
    knows, then its breakdown, payment, refunds, number and title), all from its own row, but for a
    refund, whose tax lines and card are its share of its sale's (one more query).
    Contact data is masked unless ``reveal_contact``. ``merchant``: the receipt's, as its
    record is now, for the identity it states (by default read with the receipt: one
    more query)."""
    data = _TEMPLATE.copy()
    data.update(zip(_READ, _read(receipt), strict=True))
    for name in _MOMENTS:
        data[name] = iso_utc(data[name])
    if not reveal_contact:
        for name, mask in _CONTACTS.items():
            data[name] = mask(data[name])
    details = receipt.details
    if details:  # most sales have none: their detail fields stay null
        for name in _DETAIL:
            data[name] = details.get(name)
        payment = details.get(_PAYMENT)
        if payment:
            data[_PAYMENT] = {name: payment.get(name) for name in PAYMENT_DETAILS}
        for name in _DETAILS:
            data[name] = details.get(name, [])
    else:
        for name in _DETAILS:
            data[name] = []
    data[_TITLE] = title(receipt)
    issuer = merchant if merchant is not None else receipt.merchant
    for name, attribute in _ISSUER:
        data[name] = getattr(issuer, attribute) or None
    if receipt.refund_of_id:
        share = refund_share(receipt, receipt.refund_of)
        payment = share.payment_details
        data["tax_lines"] = share.tax_lines
        data[_PAYMENT] = {name: payment.get(name) for name in PAYMENT_DETAILS} if payment else None
    return data
