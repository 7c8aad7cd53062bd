"""A contact as the locker knows it: a phone number (E.164) or an email address (lower
case), read from what a customer typed with the rules receipts are stored by."""

from dataclasses import dataclass

from django.utils.crypto import salted_hmac

from receipts.contacts import mask_email, mask_phone, normalize_email, normalize_phone, phone_example

SMS = "sms"
EMAIL = "email"


@dataclass(frozen=True)
class Contact:
    kind: str  # SMS or EMAIL
    value: str  # E.164, or the address in lower case

    @property
    def masked(self) -> str:
        """As pages show it before and after proof: ``+234*******89``, ``a*******@example.com``."""
        return (mask_phone(self.value) if self.kind == SMS else mask_email(self.value)) or ""

    @property
    def noun(self) -> str:
        return "number" if self.kind == SMS else "email"

    @property
    def digest(self) -> str:
        """A keyed digest (HMAC-SHA256 with the server's secret) that names the contact in
        the locker's counters and records without holding it."""
        return salted_hmac("receco.locker.contact", f"{self.kind}:{self.value}", algorithm="sha256").hexdigest()


def read_contact(text: str) -> Contact:
    """The contact ``text`` names: an email address if it holds an "@", else a phone
    number (read in RECECO_PHONE_REGION without a country code).

    Raises ValueError with the words a customer is shown."""
    text = (text or "").strip()
    if not text:
        raise ValueError("Enter your mobile number or email address.")
    if "@" in text:
        try:
            return Contact(EMAIL, normalize_email(text).lower())
        except ValueError:
            raise ValueError("Enter a valid email address, like name@example.com.") from None
    try:
        return Contact(SMS, normalize_phone(text))
    except ValueError:
        raise ValueError(f"Enter a valid mobile number, like {phone_example()}, or an email address.") from None
