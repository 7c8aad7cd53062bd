"""What a delivery says: a receipt as an email and as a text message."""

from collections.abc import Callable
from email.mime.image import MIMEImage
from email.utils import formataddr, parseaddr

from django.conf import settings
from django.core import checks
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from receipts import annexes, detach_links, gsm
from receipts.contacts import EMAIL_FIELD, PHONE_FIELD
from receipts.models import Receipt
from receipts.money import format_amount
from receipts.rendering.display import receipt_context

# A text message names the shop in at most this many characters; shortened further, to
# no fewer than the second number, when that makes it one part (receipts.gsm).
SMS_NAME_LENGTH = 40
SMS_NAME_MIN = 12


def compose_email(receipt: Receipt, to: str) -> EmailMultiAlternatives:
    """The receipt as an email to ``to``: a plain-text part and an HTML alternative, both with
    the link and the "Not your receipt?" link that detaches ``to`` from it; from the shop's
    name (at DEFAULT_FROM_EMAIL's address), replies to its support address when it has one."""
    not_mine = detach_links.url(receipt, EMAIL_FIELD, to)
    shown = annexes.of(receipt)
    context = {
        **receipt_context(receipt),
        "url": receipt.message_url,
        "not_mine_url": not_mine,
        "annexes": [(annex, _content_id(annex)) for annex in shown],
    }
    subject = " ".join(render_to_string("receipts/email/subject.txt", context).split())
    text = render_to_string("receipts/email/receipt.txt", context)
    html = render_to_string("receipts/email/receipt.html", context)
    support = context["merchant"].support_email
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=formataddr((" ".join(receipt.merchant_name.split()), parseaddr(settings.DEFAULT_FROM_EMAIL)[1])),
        to=[to],
        reply_to=[support] if support else None,
        headers={"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All"},
    )
    message.attach_alternative(html, "text/html")
    if shown:
        # Each annex's QR code as an image of the HTML part (cid:), which mail clients show
        # where they block data: URLs and inline SVG.
        message.mixed_subtype = "related"
        for annex in shown:
            image = MIMEImage(annex.png(), "png")
            image.add_header("Content-ID", f"<{_content_id(annex)}>")
            image.add_header("Content-Disposition", "inline", filename=f"{annex.name}-qr.png")
            message.attach(image)
    return message


def _content_id(annex: annexes.Annex) -> str:
    return f"{annex.name}-qr@receco"


def compose_sms(receipt: Receipt, to: str) -> str:
    """A short text in the GSM alphabet (the currency's code, not its symbol; the shop's
    name in plain letters, receipts.gsm): the total, the receipt's short link and the
    "Not your receipt?" short link that detaches ``to`` from it.

    It fits one part (160 characters) whenever the links leave the shop's name room for
    SMS_NAME_MIN characters (or the whole of a shorter name): first as "Receipt from
    <shop>, <total>: <link>", the name shortened to what is left (SMS_NAME_LENGTH at most);
    where that leaves too little, without "Receipt from " (a refund's: "Refund, <shop>").
    With a RECECO_WEB_URL longer still it takes two parts, in the first form with the name
    SMS_NAME_LENGTH at most (``check_text_message`` warns of it at start-up); the links
    are never cut."""
    forms = _sms_forms(receipt, to)
    name = gsm.plain(" ".join(receipt.merchant_name.split()))
    for text in forms:
        room = gsm.room(text(""))
        # Shortened below SMS_NAME_LENGTH only when that makes the text one part.
        if room >= min(len(name), SMS_NAME_MIN):
            return text(_shortened(name, min(SMS_NAME_LENGTH, room)))
    return forms[0](_shortened(name, SMS_NAME_LENGTH))


def _sms_forms(receipt: Receipt, to: str) -> list[Callable[[str], str]]:
    """The forms of ``receipt``'s text message to ``to``, the longest first, each made
    with the shop's name it is given."""
    prefix = "[TEST] " if receipt.is_test else ""
    refund = bool(receipt.refund_of_id)
    total = format_amount(receipt.total_amount, receipt.currency, symbol=False)
    links = f"{short_link(receipt)}\nNot yours? {detach_links.short_url(receipt, PHONE_FIELD, to)}"
    return [
        lambda name: f"{prefix}{'Refund' if refund else 'Receipt'} from {name}, {total}: {links}",
        lambda name: f"{prefix}{'Refund, ' if refund else ''}{name}, {total}: {links}",
    ]


def whatsapp_parameters(receipt: Receipt, to: str) -> list[str]:
    """The four body parameters of the receipt's WhatsApp template message to ``to``
    (messaging.providers.whatsapp): the shop's name, the total ("₦1,300.00"), the
    receipt's short link and the "Not your receipt?" link that detaches ``to`` from it.
    WhatsApp refuses a parameter with a line break or a tab, or more than four spaces in a row."""
    name = " ".join(receipt.merchant_name.split())[: SMS_NAME_LENGTH * 2]
    total = format_amount(receipt.total_amount, receipt.currency)
    if receipt.refund_of_id:
        total = f"{total} refunded"
    return [name, total, short_link(receipt), detach_links.short_url(receipt, PHONE_FIELD, to)]


# What the start-up check composes: a sale and a refund of NGN 100,000.00 (most totals are
# no longer) to a number.
_CHECKED_TOTAL = 10_000_000
_CHECKED_PHONE = "+2348031234567"


def check_text_message(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A warning (receipts.W001) when RECECO_WEB_URL is too long for a receipt's text
    message to fit one part with SMS_NAME_MIN characters of its shop's name, naming the
    longest address that would; none otherwise."""
    url = settings.RECECO_WEB_URL
    over = 0
    for refund_of_id in (None, 1):
        sample = Receipt(short_code="K7P2QX", total_amount=_CHECKED_TOTAL, currency="NGN", refund_of_id=refund_of_id)
        shortest = _sms_forms(sample, _CHECKED_PHONE)[-1]
        over = max(over, SMS_NAME_MIN - gsm.room(shortest("")))
    if over <= 0:
        return []
    longest = len(url) - (over + 1) // 2  # the address is in the text twice, once in each link
    return [
        checks.Warning(
            f"RECECO_WEB_URL ({len(url)} characters) is too long for receipts' text messages to fit one part of "
            f"160 characters: a sale or refund of NGN 100,000.00 takes two, and costs twice as much.",
            hint=f"An address of at most {longest} characters, https:// included, keeps them to one part "
            "(docs/privacy.md, The text message).",
            obj="settings.RECECO_WEB_URL",
            id="receipts.W001",
        )
    ]


def short_link(receipt: Receipt) -> str:
    """The receipt's link in a text message: ``RECECO_WEB_URL/r/<short code>``, which leads
    to its page (``message_url``), by short code as every message links it."""
    return f"{settings.RECECO_WEB_URL}/r/{receipt.short_code}"


def _shortened(name: str, length: int) -> str:
    if len(name) <= length:
        return name
    return name[: length - 3].rstrip() + "..."
