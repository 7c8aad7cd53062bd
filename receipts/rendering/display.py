"""A receipt as customers read it, shared by the receipt page and the delivery email:
amounts formatted, dates in the merchant's time zone, the merchant's legal identity,
the breakdown of the total, refunds (a refund's share of its sale's tax, a sale's items
refunded), values in words, colours safe to put into CSS."""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db import router
from django.urls import reverse

from merchants.colors import HOUSE_ACCENT_COLOR
from merchants.models import Merchant
from merchants.zones import local_time
from receipts.models import Receipt
from receipts.money import format_amount
from receipts.rendering.documents import RefundShare, refund_share, title
from receipts.rendering.representation import iso_utc

_RRGGBB = re.compile(r"#[0-9a-fA-F]{6}")


@dataclass(frozen=True)
class Line:
    name: str
    quantity: int
    unit_price: str
    total_price: str
    sku: str | None
    refunded: int = 0  # how many of the quantity have been refunded


def accent_color(value: object) -> str:
    """Return ``value`` as lowercase ``#rrggbb`` if it is one, else the house colour: only
    this reaches a stylesheet, whatever is stored."""
    if isinstance(value, str) and _RRGGBB.fullmatch(value):
        return value.lower()
    return HOUSE_ACCENT_COLOR


def _luminance(color: str) -> float:
    channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    lighter, darker = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_color_on(background: str) -> str:
    """Black or white, whichever reads better on ``background``: one of them always
    reaches 4.5:1 (WCAG AA), whatever colour the merchant chose."""
    return "#ffffff" if contrast_ratio(background, "#ffffff") >= contrast_ratio(background, "#000000") else "#000000"


_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")


def logo_url(value: object) -> str | None:
    """Return the logo URL only if it is an absolute http(s) URL with a plain host name
    (never javascript:, data:, credentials or odd hosts), so its origin is safe to put
    into the Content-Security-Policy header."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    try:
        parts = urlsplit(url)  # raises ValueError for http://[::1, which older versions stored
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or parts.username is not None or not _HOST.fullmatch(parts.hostname or ""):
        return None
    return url


def origin(url: str) -> str:
    """``https://CDN.example.com:8443/a.png`` -> ``https://cdn.example.com:8443``."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


def lines(receipt: Receipt) -> list[Line]:
    """The receipt's items with their amounts formatted in its currency, and how many of
    each have been refunded."""
    refunded = receipt.detail("refunded_lines") or {}
    return [
        Line(
            name=str(item.get("name", "")),
            quantity=item.get("quantity", 1),
            unit_price=format_amount(item.get("unit_price", 0), receipt.currency),
            total_price=format_amount(item.get("total_price", 0), receipt.currency),
            sku=item.get("sku"),
            refunded=refunded.get(str(index), 0),
        )
        for index, item in enumerate(receipt.items)
    ]


# Values POS systems send in code form, as customers read them.
WORDS = {
    "completed": "Completed",
    "partially_refunded": "Partly refunded",
    "refunded": "Refunded",
    "refund": "Refund",
    "voided": "Voided",
    "card": "Card",
    "cash": "Cash",
    "bank_transfer": "Bank transfer",
    "transfer": "Bank transfer",
    "ussd": "USSD",
    "pos": "POS terminal",
    "mobile_money": "Mobile money",
    "wallet": "Wallet",
    "qr": "QR payment",
}
STATUS_CLASSES = {
    "completed": "status-ok",
    "partially_refunded": "status-refunded",
    "refunded": "status-refunded",
    "voided": "status-voided",
    "refund": "status-refund",
}
# Tax identifier schemes by the name customers know them by.
TAX_SCHEMES = {"NG_TIN": "TIN", "GH_TIN": "TIN", "KE_PIN": "KRA PIN", "ZA_VAT": "VAT no.", "EU_VAT": "VAT no."}


def words(value: str | None) -> str:
    """A status or payment method in words: ``bank_transfer`` -> ``Bank transfer``."""
    if not value:
        return ""
    known = WORDS.get(value.strip().lower())
    return known or value.strip().replace("_", " ").capitalize()


@dataclass(frozen=True)
class Row:
    """One line of the breakdown above the total."""

    label: str
    amount: str


def receipt_context(receipt: Receipt, merchant: Merchant | None = None) -> dict:
    """Template context for showing ``receipt`` of ``merchant`` (by default its own: one
    query), on the page and in the email. Free text that came with a sale made without
    the merchant's key (items, location, payment, status) is for the receipt page only:
    ``itemised`` is False and messages leave it out."""
    merchant = merchant or receipt.merchant
    accent = accent_color(receipt.accent_color)
    zone = merchant.time_zone
    details = receipt.details or {}
    share = refund_share(receipt, receipt.refund_of) if receipt.refund_of_id else None
    payment = (share.payment_details if share else details.get("payment_details")) or {}
    # A refund's status is its sale's POS's "completed": it reads as what it is.
    status = "refund" if share else receipt.status
    return {
        "title": title(receipt),
        "title_noun": _noun(title(receipt)),
        "receipt": receipt,
        "merchant": merchant,
        "tax_identifier": _tax_identifier(merchant),
        "registration_number": merchant.registration_number,
        "accent": accent,
        "accent_text": text_color_on(accent),
        "logo_url": logo_url(receipt.merchant_logo),
        "date_short": local_time(receipt.transaction_date, zone, "D j M Y, H:i T"),
        "date_long": local_time(receipt.transaction_date, zone, "j F Y, H:i T"),
        "iso_date": iso_utc(receipt.transaction_date),
        "itemised": receipt.keyed or receipt.is_test,
        "lines": lines(receipt),
        "total": format_amount(receipt.total_amount, receipt.currency),
        "breakdown": refund_breakdown(receipt, share) if share else breakdown(receipt, details),
        "status_words": words(status),
        "status_class": STATUS_CLASSES.get(status, "status-other"),
        "payment_words": words(receipt.payment_method),
        "card": card_words(payment),
        "authorization_code": payment.get("authorization_code"),
        "is_completed": receipt.status == "completed",
        "is_refund": receipt.refund_of_id is not None,
        "refund_of_url": _page(details["refund_of"]) if details.get("refund_of") else None,
        "refund_of_code": details.get("refund_of_short_code"),
        "refund_reason": details.get("reason"),
        "refunds": _refunds(receipt, details.get("refunds", [])),
        "refunded": format_amount(sum(entry["amount"] for entry in details.get("refunds", [])), receipt.currency),
        **_void(receipt, zone),
    }


@dataclass(frozen=True)
class RefundEntry:
    """One refund of a sale, as its page lists it."""

    short_code: str
    number: str | None  # its receipt number; None for a refund stored before numbering
    url: str
    amount: str
    items: list[str]  # "Jollof rice × 1", what came back; empty for a refund of an amount


def _refunds(sale: Receipt, entries: list[dict]) -> list[RefundEntry]:
    """The sale's refunds with the items each gave back (one query, when it has any)."""
    if not entries:
        return []
    refunds = Receipt.objects.db_manager(router.db_for_read(Receipt, instance=sale)).filter(refund_of=sale)
    refunds = refunds.only("token", "items", "details", "number_series", "number")
    names = [str(item.get("name", "")) for item in sale.items]
    items, numbers = {}, {}
    for refund in refunds:
        numbers[refund.token] = refund.receipt_number
        items[refund.token] = [
            f"{names[line['index']]} × {line['quantity']}"
            for line in refund.detail("lines") or []
            if line["index"] < len(names)
        ]
    return [
        RefundEntry(
            short_code=entry["short_code"],
            number=numbers.get(entry["token"]),
            url=_page(entry["token"]),
            amount=format_amount(entry["amount"], sale.currency),
            items=items.get(entry["token"], []),
        )
        for entry in entries
    ]


def _noun(document_title: str) -> str:
    """The title as it reads after "Your": ``VAT receipt``, ``refund receipt``; a voided
    sale's is still its ``receipt``."""
    if document_title == "Voided":
        return "receipt"
    return document_title if document_title.startswith("VAT") else document_title.lower()


def _void(receipt: Receipt, zone: str) -> dict:
    void = receipt.void if receipt.status == "voided" and hasattr(receipt, "void") else None
    return {"void": void, "void_date": local_time(void.created_at, zone, "j F Y, H:i T") if void else None}


def _page(token: str) -> str:
    return reverse("receipts:receipt", kwargs={"reference": token})


def card_words(payment: dict) -> str:
    """The card a sale was paid with, as its receipt names it: "Visa •••• 4242"; "" if none."""
    digits = payment.get("card_last4")
    return " ".join(filter(None, [words(payment.get("card_brand")), f"•••• {digits}" if digits else ""]))


def _tax_identifier(merchant: Merchant) -> str | None:
    """``TIN 12345678-0001``: the scheme by the name customers know it by."""
    if merchant.tax_identifier is None:
        return None
    scheme, value = merchant.tax_identifier
    return f"{TAX_SCHEMES.get(scheme, scheme.replace('_', ' '))} {value}"


def refund_breakdown(refund: Receipt, share: RefundShare) -> list[Row]:
    """A refund's lines above its total: its items' sum, then each tax line of the sale
    with the refund's share of it, then what remains of the difference (its share of the
    sale's discounts and charges), if anything does."""
    money = refund.currency
    items_total = sum(item.get("total_price", 0) for item in refund.items)
    added = sum(line["tax_amount"] for line in share.tax_lines if not line["inclusive"])
    rest = refund.total_amount - items_total - added
    if not share.tax_lines and not rest:
        return []
    rows = [Row("Subtotal", format_amount(items_total, money))]
    for line in share.tax_lines:
        rows.append(Row(_tax_label(line, "refunded"), format_amount(line["tax_amount"], money)))
    if rest:
        rows.append(Row("Share of the sale's discounts and charges", format_amount(rest, money)))
    return rows


def _tax_label(line: dict, verb: str = "") -> str:
    """``VAT 7.5%``, ``VAT 7.5% (included)``, ``VAT 7.5% refunded (included)``."""
    label = " ".join(filter(None, [line["name"], f"{line['rate']:g}%", verb]))
    return f"{label} (included)" if line["inclusive"] else label


def breakdown(receipt: Receipt, details: dict) -> list[Row]:
    """The lines between the items and the total: the POS's own breakdown when it gave
    its subtotal, else what the items do not add up to, as one line."""
    money = receipt.currency
    items_total = sum(item.get("total_price", 0) for item in receipt.items)
    if details.get("subtotal_amount") is None:
        adjustment = receipt.total_amount - items_total
        if not adjustment:
            return []
        return [
            Row("Subtotal", format_amount(items_total, money)),
            Row("Taxes, charges and discounts", format_amount(adjustment, money)),
        ]
    rows = [Row("Subtotal", format_amount(details["subtotal_amount"], money))]
    if details.get("discount_amount"):
        rows.append(Row("Discount", format_amount(-details["discount_amount"], money)))
    for line in details.get("tax_lines") or []:
        rows.append(Row(_tax_label(line), format_amount(line["tax_amount"], money)))
    if details.get("tip_amount"):
        rows.append(Row("Tip", format_amount(details["tip_amount"], money)))
    return rows
