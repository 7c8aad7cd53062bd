"""A receipt as customers read it, shared by the receipt page and the delivery email:
amounts formatted, the date in the shop's time zone, colours safe to put into CSS."""

import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import dateformat

from merchants.colors import HOUSE_ACCENT_COLOR
from receipts.models import Receipt
from receipts.money import format_amount
from receipts.representation import iso_utc

_RRGGBB = re.compile(r"#[0-9a-fA-F]{6}")


@dataclass(frozen=True)
class Line:
    name: str
    quantity: int
    unit_price: str
    total_price: str
    sku: str | None


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
    parts = urlsplit(url)
    try:
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
    """The receipt's items with their amounts formatted in its currency."""
    return [
        Line(
            name=str(item.get("name", "")),
            quantity=item.get("quantity", 1),
            unit_price=format_amount(item.get("unit_price", 0), receipt.currency),
            total_price=format_amount(item.get("total_price", 0), receipt.currency),
            sku=item.get("sku"),
        )
        for item in receipt.items
    ]


def local_time(moment: datetime, zone: str, format_string: str) -> str:
    """``moment`` formatted (Django's date format) as it reads in the time zone ``zone``;
    in UTC when that zone cannot show it (a stored date at the calendar's very edge)."""
    try:
        local = moment.astimezone(zoneinfo.ZoneInfo(zone))
    except OverflowError:
        local = moment.astimezone(UTC)
    return dateformat.format(local, format_string)


def receipt_context(receipt: Receipt) -> dict:
    """Template context for showing ``receipt`` (page and email). Free text that came
    with a sale made without the merchant's key (items, location, payment, status) is
    for the receipt page only: ``itemised`` is False and messages leave it out."""
    accent = accent_color(receipt.accent_color)
    zone = settings.RECECO_TIME_ZONE
    items_total = sum(item.get("total_price", 0) for item in receipt.items)
    adjustment = receipt.total_amount - items_total
    return {
        "receipt": receipt,
        "accent": accent,
        "accent_text": text_color_on(accent),
        "logo_url": logo_url(receipt.merchant_logo),
        "date_short": local_time(receipt.transaction_date, zone, "D j M Y, H:i"),
        "date_long": local_time(receipt.transaction_date, zone, "j F Y, H:i T"),
        "iso_date": iso_utc(receipt.transaction_date),
        "itemised": receipt.keyed or receipt.is_test,
        "lines": lines(receipt),
        "total": format_amount(receipt.total_amount, receipt.currency),
        # Taxes, service charges or discounts the POS folded into the total.
        "subtotal": format_amount(items_total, receipt.currency) if adjustment else None,
        "adjustment": format_amount(adjustment, receipt.currency) if adjustment else None,
        "is_completed": receipt.status == "completed",
    }
