"""The receipts sent to a contact, as the locker lists them: live receipts whose phone
number, or email address whatever its case, is the contact's, from every shop, newest
first (the indexes receipt_phone_date and receipt_email_date); searched by shop, day and
amount; a refund shown on its sale when the sale is listed too, else on its own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Q, QuerySet
from django.db.models.functions import Lower
from django.urls import reverse

from locker.contacts import SMS, Contact
from merchants.zones import local_time
from receipts.models import Receipt
from receipts.money import CURRENCIES, format_amount
from receipts.rendering.display import words

PER_PAGE = 20


def receipts_of(contact: Contact) -> QuerySet[Receipt]:
    """Every live receipt sent to ``contact``, unordered."""
    receipts = Receipt.objects.filter(livemode=True)
    if contact.kind == SMS:
        return receipts.filter(customer_phone=contact.value)
    # LOWER(customer_email) = the address: the expression the index holds.
    return receipts.alias(email_lower=Lower("customer_email")).filter(
        email_lower=contact.value, customer_email__isnull=False
    )


def count(contact: Contact) -> int:
    """How many receipts were sent to ``contact``, refunds included: what the list says
    when not searched (a refund shown on its sale counts too) and what the erase page
    says erasing removes the contact from."""
    return receipts_of(contact).count()


def has_receipts(contact: Contact) -> bool:
    """Whether any live receipt was sent to ``contact``."""
    return receipts_of(contact).exists()


@dataclass(frozen=True)
class Search:
    shop: str = ""
    day: date | None = None
    amount: Decimal | None = None

    @property
    def is_empty(self) -> bool:
        return not self.shop and self.day is None and self.amount is None


def search(contact: Contact, wanted: Search) -> QuerySet[Receipt]:
    """The receipts of ``contact`` that ``wanted`` asks for, newest first; a refund whose
    sale was sent to the contact too is left out (it is shown on its sale)."""
    receipts = receipts_of(contact)
    if contact.kind == SMS:
        receipts = receipts.exclude(refund_of__customer_phone=contact.value)
    else:
        receipts = receipts.exclude(refund_of__in=receipts_of(contact).filter(refund_of__isnull=True).values("pk"))
    if wanted.shop:
        receipts = receipts.filter(merchant_name__icontains=wanted.shop)
    if wanted.day is not None:
        # The day as the service's time zone (DJANGO_TIME_ZONE) reads it.
        receipts = receipts.filter(transaction_date__date=wanted.day)
    if wanted.amount is not None:
        receipts = receipts.filter(_amount_is(wanted.amount))
    return receipts.select_related("merchant").order_by("-transaction_date", "-pk")


def _amount_is(amount: Decimal) -> Q:
    """A total of ``amount`` in major units (``1300``, ``1300.50``), in each currency's
    minor units: two digits (kobo, cents) unless receipts.money says otherwise (yen, fils)."""
    other = {code: currency.digits for code, currency in CURRENCIES.items() if currency.digits != 2}
    matches = Q(pk__in=[])
    for digits in sorted({2, *other.values()}):
        minor = amount * 10**digits
        if minor != minor.to_integral_value():
            continue
        codes = [code for code, its_digits in other.items() if its_digits == digits]
        currencies = ~Q(currency__in=list(other)) if digits == 2 else Q(currency__in=codes)
        matches |= currencies & Q(total_amount=int(minor))
    return matches


@dataclass(frozen=True)
class Refund:
    url: str
    amount: str


@dataclass(frozen=True)
class Entry:
    """One line of the locker's list."""

    url: str
    shop: str
    when: str
    iso_date: str
    total: str
    status: str
    is_refund: bool
    refunds: list[Refund]


def _page(token: str) -> str:
    return reverse("receipts:receipt", kwargs={"reference": token})


def entries(receipts: list[Receipt]) -> list[Entry]:
    """The list's lines of ``receipts`` (their merchants selected with them): no query."""
    found = []
    for receipt in receipts:
        refunds = [
            Refund(_page(entry["token"]), format_amount(entry["amount"], receipt.currency))
            for entry in receipt.detail("refunds", [])
        ]
        is_refund = receipt.refund_of_id is not None
        found.append(
            Entry(
                url=receipt.get_absolute_url(),
                shop=receipt.merchant_name,
                when=local_time(receipt.transaction_date, receipt.merchant.time_zone, "j M Y, H:i T"),
                iso_date=receipt.transaction_date.isoformat(),
                total=format_amount(receipt.total_amount, receipt.currency),
                status=words("refund" if is_refund else receipt.status),
                is_refund=is_refund,
                refunds=refunds,
            )
        )
    return found
