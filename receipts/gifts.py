"""Gift receipts: a sale's items and its shop's return policy without any price, for the
person a purchase is given to, who may bring it back.

A sale has at most one, made when first asked for (on the receipt's page, or by the shop
from the sale's page in the dashboard) and the same afterwards. It has a link of its own
(a token nobody can guess: /app/gift/<token>) and a code of its own printed on it, ``G``
and six letters and digits (``GK7P2QX``), which the dashboard's search resolves to the sale
so that the shop finds and refunds it as it does the sale. Neither leads to the sale's
receipt: a gift receipt shows nothing of the sale's amounts, tax, payment or card, its
receipt number or short code, or the customer's contact.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from merchants.admission.admit import Admission
from merchants.zones import local_time
from receco.errors import InvalidInput, NotFound
from receco.lib import qr
from receipts.codes import SHORT_CODE_ALPHABET
from receipts.models import GIFT_CODE_LENGTH, GiftReceipt, Receipt
from receipts.rendering.display import accent_color, lines, logo_url, text_color_on

CODE_PREFIX = "G"
CODE_RE = re.compile(f"^{CODE_PREFIX}[{SHORT_CODE_ALPHABET}]{{{GIFT_CODE_LENGTH - 1}}}$")
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{22,64}$")
_TRIES = 5

GIFT_NOT_FOUND = "Gift receipt not found"
NOT_A_SALE = "A refund has no gift receipt: ask for one on the sale's receipt."
VOIDED = "This sale was voided: it has no gift receipt."


@dataclass(frozen=True)
class GiftLine:
    """An item as a gift receipt shows it: what it is and how many, never its price."""

    name: str
    quantity: int
    returned: int  # how many of them the shop took back already


def gift_receipt(sale: Receipt) -> GiftReceipt:
    """``sale``'s gift receipt, made the first time it is asked for. Raises InvalidInput
    (NOT_A_SALE, VOIDED) for a refund or a voided sale."""
    if sale.refund_of_id is not None:
        raise InvalidInput(NOT_A_SALE)
    if sale.status == "voided":
        raise InvalidInput(VOIDED)
    for _ in range(_TRIES):
        try:
            with transaction.atomic():
                gift, _ = GiftReceipt.objects.get_or_create(
                    receipt=sale, defaults={"token": secrets.token_urlsafe(18), "code": new_code()}
                )
            return gift
        except IntegrityError:
            # Another request made it first (the sale is unique), or, rarely, the code was taken: look again.
            continue
    return GiftReceipt.objects.get(receipt=sale)


def new_code() -> str:
    """A fresh gift code: G and six of the short codes' letters and digits (no 0/O, 1/I/L)."""
    return CODE_PREFIX + "".join(secrets.choice(SHORT_CODE_ALPHABET) for _ in range(GIFT_CODE_LENGTH - 1))


def is_code(text: str) -> bool:
    """Whether ``text`` (typed: any case, spaces around) has the form of a gift code."""
    return bool(CODE_RE.match(text.strip().upper()))


def find(token: str) -> GiftReceipt | None:
    """The gift receipt at the link ``token``, with its sale and shop: one query; None if none."""
    if not TOKEN_RE.match(token):
        return None
    return GiftReceipt.objects.select_related("receipt__merchant").filter(token=token).first()


def find_by_code(code: str) -> GiftReceipt | None:
    """The gift receipt a typed code names, with its sale and shop: one query; None if none."""
    if not is_code(code):
        return None
    return GiftReceipt.objects.select_related("receipt__merchant").filter(code=code.strip().upper()).first()


def find_typed(code: str, admission: Admission) -> GiftReceipt:
    """The gift receipt whose code a customer typed (the scan page), held to the budget of
    misses of its address that a receipt's short code is (receipts.lookup): gift codes can
    be guessed too. Raises RateLimited (too many misses), NotFound (none has it)."""
    admission.check_lookup_budget()
    gift = find_by_code(code)
    if gift is None:
        admission.record_failed_lookup()
        raise NotFound(GIFT_NOT_FOUND)
    return gift


def gift_lines(sale: Receipt) -> list[GiftLine]:
    """The sale's items without their prices."""
    return [GiftLine(line.name, line.quantity, line.refunded) for line in lines(sale)]


def context(gift: GiftReceipt) -> dict:
    """What a gift receipt shows (templates/receipts/gift.html): the shop, the day, the
    items and how many, the return policy, the gift code and the QR code of its link. Only
    what is named here reaches the page: nothing of the sale's amounts, payment or contact."""
    sale = gift.receipt
    merchant = sale.merchant
    accent = accent_color(sale.accent_color)
    link = f"{settings.RECECO_WEB_URL}{gift.get_absolute_url()}"
    return {
        "shop": sale.merchant_name,
        "location": sale.location,
        "merchant": {"legal_name": merchant.legal_name, "address": merchant.address, "phone": merchant.phone},
        "return_policy": merchant.return_policy,
        "accent": accent,
        "accent_text": text_color_on(accent),
        "logo_url": logo_url(sale.merchant_logo),
        "date_long": local_time(sale.transaction_date, merchant.time_zone, "j F Y"),
        "iso_date": local_time(sale.transaction_date, merchant.time_zone, "Y-m-d"),
        "is_test": sale.is_test,
        "lines": gift_lines(sale),
        "code": gift.code,
        "link": link,
        "qr_svg": qr.qr_svg(link, title=f"QR code of this gift receipt, {link}"),
    }
