"""What a delivery says: a receipt as an email and as a text message."""

from email.utils import formataddr, parseaddr

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from receipts import detach_links, gsm
from receipts.contacts import EMAIL_FIELD, PHONE_FIELD
from receipts.display import receipt_context
from receipts.models import Receipt
from receipts.money import format_amount

# A text message names the shop in at most this many characters; shortened further, to
# no fewer than the second number, when that makes it one part (receipts.gsm).
SMS_NAME_LENGTH = 40
SMS_NAME_MIN = 12


def compose_email(receipt: Receipt, to: str) -> EmailMultiAlternatives:
    """The receipt as an email to ``to``: a plain-text part and an HTML alternative, both with
    the link and the "Not your receipt?" link that detaches ``to`` from it; from the shop's
    name (at DEFAULT_FROM_EMAIL's address), replies to its support address when it has one."""
    not_mine = detach_links.url(receipt, EMAIL_FIELD, to)
    context = {**receipt_context(receipt), "url": receipt.message_url, "not_mine_url": not_mine}
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
    return message


def compose_sms(receipt: Receipt, to: str) -> str:
    """A short text in the GSM alphabet (the currency's code, not its symbol; the shop's
    name in plain letters, receipts.gsm): the total, the receipt's short link and the
    "Not your receipt?" short link that detaches ``to`` from it.

    It fits one part (160 characters) whenever the links leave the shop's name room for
    SMS_NAME_MIN characters: the name is shortened to what is left (SMS_NAME_LENGTH at
    most). With a longer RECECO_WEB_URL it takes two parts, the name SMS_NAME_LENGTH at
    most; the links are never cut."""
    prefix = "[TEST] " if receipt.is_test else ""
    kind = "Refund" if receipt.refund_of_id else "Receipt"
    total = format_amount(receipt.total_amount, receipt.currency, symbol=False)
    link = short_link(receipt)
    not_mine = detach_links.short_url(receipt, PHONE_FIELD, to)

    def text(name: str) -> str:
        return f"{prefix}{kind} from {name}, {total}: {link}\nNot yours? {not_mine}"

    room = gsm.PART - (gsm.septets(text("")) or len(text("")))
    name = gsm.plain(" ".join(receipt.merchant_name.split()))
    # Shortened below SMS_NAME_LENGTH only when that makes the text one part.
    return text(_shortened(name, SMS_NAME_LENGTH if room < SMS_NAME_MIN else min(SMS_NAME_LENGTH, room)))


def short_link(receipt: Receipt) -> str:
    """The receipt's link in a text message: ``RECECO_WEB_URL/r/<short code>``, which leads
    to its page (``message_url``), by short code as every message links it."""
    return f"{settings.RECECO_WEB_URL}/r/{receipt.short_code}"


def _shortened(name: str, length: int) -> str:
    if len(name) <= length:
        return name
    return name[: length - 3].rstrip() + "..."
