"""The "Not your receipt?" link every message to a customer carries: it detaches that one
receipt from the email address or phone number it was sent to, without signing in
(customers.views.privacy asks first, privacy.erasure detaches).

The link is ``/app/receipt/<short code>/not-mine?k=<key>``. The key is signed with
Django's signing (TimestampSigner, a salt of its own and the receipt's short code, so a
key opens no other receipt) and says which of the receipt's contacts it names, and a
keyed digest of the contact: never the contact itself, which would then sit in browser
histories, and a digest without the key would be a guessable phone number's. It holds
for RECECO_CONTACT_RETENTION_DAYS, as long as the contact itself is kept; a key for a
contact the receipt no longer holds finds nothing to remove ("already removed").

The key rides in the query string, which no log line holds (receco.ops.redaction drops
it and redacts the short code), and is short: a text message carries it too, by
the short path ``/n/<short code>?k=<key>`` (receco.urls), which leads here.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

from receipts.contacts import EMAIL_FIELD, PHONE_FIELD
from receipts.models import Receipt

SALT = "receipts.detach_links"
# The receipt's contact fields a key may name, by the one letter the key says.
FIELDS = {"e": EMAIL_FIELD, "p": PHONE_FIELD}
_LETTERS = {field: letter for letter, field in FIELDS.items()}
# The signature's length in the key: 96 bits of HMAC-SHA256, beyond guessing online
# (Django's own 43 characters would make the text message longer for nothing).
SIGNATURE_LENGTH = 16
# The contact's digest: enough to tell one contact from the next the receipt is given.
DIGEST_BYTES = 6


class BadLink(Exception):
    """A key that was not made here for this receipt (altered, cut short or made up)."""


class ExpiredLink(Exception):
    """A key older than RECECO_CONTACT_RETENTION_DAYS."""


@dataclass(frozen=True)
class Link:
    """What a valid key says: the receipt's contact field it names, and that contact's digest."""

    field: str
    digest: str


class _Signer(signing.TimestampSigner):
    def signature(self, value, key=None):
        return super().signature(value, key)[:SIGNATURE_LENGTH]


def _signer(short_code: str) -> _Signer:
    return _Signer(salt=f"{SALT}:{short_code}")


def digest(contact: str) -> str:
    """A keyed digest of ``contact`` (an email address whatever its case), URL-safe."""
    mac = salted_hmac(f"{SALT}.contact", contact.lower(), algorithm="sha256").digest()[:DIGEST_BYTES]
    return base64.urlsafe_b64encode(mac).decode()


def key(receipt: Receipt, field: str, contact: str) -> str:
    """The key of the link detaching ``contact``, the value of ``receipt``'s ``field``."""
    return _signer(receipt.short_code).sign(_LETTERS[field] + digest(contact))


def url(receipt: Receipt, field: str, contact: str) -> str:
    """The absolute "Not your receipt?" link of a message of ``receipt`` sent to ``contact``
    (its ``field``: customer_email or customer_phone), under RECECO_WEB_URL."""
    return f"{settings.RECECO_WEB_URL}/app/receipt/{receipt.short_code}/not-mine?k={key(receipt, field, contact)}"


def short_url(receipt: Receipt, field: str, contact: str) -> str:
    """The same link as ``url``, by the short path a text message carries:
    ``RECECO_WEB_URL/n/<short code>?k=<key>``, which leads to it with its key."""
    return f"{settings.RECECO_WEB_URL}/n/{receipt.short_code}?k={key(receipt, field, contact)}"


def max_age() -> timedelta:
    """How long a link holds: as long as a receipt keeps its contact (privacy.retention)."""
    return timedelta(days=settings.RECECO_CONTACT_RETENTION_DAYS)


def read(short_code: str, value: str) -> Link:
    """What the key ``value`` of a link to the receipt ``short_code`` says.

    Raises BadLink for a key not made for that receipt, ExpiredLink for one too old.
    """
    try:
        said = _signer(short_code).unsign(value, max_age=max_age())
    except signing.SignatureExpired:
        raise ExpiredLink from None
    except signing.BadSignature:
        raise BadLink from None
    field = FIELDS.get(said[:1])
    if field is None:  # signed here, so never; but a key must say a field
        raise BadLink
    return Link(field, said[1:])


def names(receipt: Receipt, link: Link) -> str | None:
    """The contact of ``receipt`` that ``link`` names, if the receipt still holds it; else None."""
    contact = getattr(receipt, link.field)
    if contact and constant_time_compare(digest(contact), link.digest):
        return contact
    return None
