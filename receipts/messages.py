"""What a delivery says: a receipt as an email and as a text message."""

from email.utils import formataddr, parseaddr

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from receipts import detach_links
from receipts.contacts import EMAIL_FIELD, PHONE_FIELD
from receipts.display import receipt_context
from receipts.models import Receipt
from receipts.money import format_amount

# A text message names the shop in at most this many characters.
SMS_NAME_LENGTH = 40


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
    """A short text with the total and the link, in the GSM alphabet (currency code, not
    symbol), and the "Not your receipt?" link that detaches ``to`` from it: two parts of a
    concatenated message (at most 306 characters), the second for that link."""
    name = " ".join(receipt.merchant_name.split())
    if len(name) > SMS_NAME_LENGTH:
        name = name[: SMS_NAME_LENGTH - 3].rstrip() + "..."
    prefix = "[TEST] " if receipt.is_test else ""
    kind = "refund" if receipt.refund_of_id else "receipt"
    total = format_amount(receipt.total_amount, receipt.currency, symbol=False)
    not_mine = detach_links.url(receipt, PHONE_FIELD, to)
    return f"{prefix}Your {kind} from {name}, {total}: {receipt.message_url}\nNot yours? {not_mine}"
