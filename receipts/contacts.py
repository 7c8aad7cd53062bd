"""Customer contact data: validation, normalisation and masking. Pure functions: storing
a contact and sending the receipt there is receipts.writer.update_contact (with messaging.customers)."""

import email_validator
import phonenumbers
from django.conf import settings

from receco.errors import InvalidInput

MAX_EMAIL_LENGTH = 254
# Longer than any phone number written with spaces, dots or a prefix such as "tel:".
MAX_PHONE_LENGTH = 40
# Top-level names kept for private networks (ICANN's .internal, and those RFC 6762
# lists as in use on home and company networks), which email-validator's list of
# special-use names (localhost, local, test, onion, arpa, invalid) does not cover.
PRIVATE_TOP_LEVEL_DOMAINS = {"internal", "intranet", "private", "corp", "home", "lan", "localdomain"}
CONTACT_REQUIRED = "Email or phone number required"
# The receipt's fields that hold a customer's contact (receipts.models.Receipt).
EMAIL_FIELD = "customer_email"
PHONE_FIELD = "customer_phone"
CONTACT_FIELDS = (EMAIL_FIELD, PHONE_FIELD)
# How the customer asked to be sent the receipt at their phone number: by text message
# (the default) or on WhatsApp. Kept beside the number (Receipt.customer_phone_channel),
# and gone with it; messaging sends on it (messaging.customers).
PHONE_CHANNEL_FIELD = "customer_phone_channel"
SMS_CHANNEL = "sms"
WHATSAPP_CHANNEL = "whatsapp"
PHONE_CHANNELS = (SMS_CHANNEL, WHATSAPP_CHANNEL)
PHONE_CHANNEL_MESSAGE = 'Must be "sms" or "whatsapp"'


def normalize_email(value: object) -> str:
    """Return the address trimmed, with its domain lowercased.

    Only addresses at a public domain name are valid: receipts are sent there, and an
    address such as ``a@localhost``, ``a@[127.0.0.1]`` or ``a@mail.internal`` would
    have the service send mail inside its own network. The syntax and the domain rules
    are email-validator's (no DNS query is made). Raises ValueError, saying what is
    wrong, if it is not such an address.
    """
    if not isinstance(value, str):
        raise ValueError("Must be a string")
    address = value.strip()
    if len(address) > MAX_EMAIL_LENGTH:
        raise ValueError(f"Must be at most {MAX_EMAIL_LENGTH} characters")
    try:
        checked = email_validator.validate_email(address, check_deliverability=False, allow_smtputf8=False)
    except email_validator.EmailNotValidError:
        checked = None
    if checked is None or checked.ascii_domain.rpartition(".")[2].lower() in PRIVATE_TOP_LEVEL_DOMAINS:
        raise ValueError("Not a valid email address at a public domain")
    local, _, domain = address.rpartition("@")
    return f"{local}@{domain.lower()}"


def normalize_phone(value: object) -> str:
    """Return the number in E.164; numbers without a country code are read in RECECO_PHONE_REGION.

    Raises ValueError, saying what is wrong, if it is not a valid phone number.
    """
    if not isinstance(value, str):
        raise ValueError("Must be a string")
    if len(value) > MAX_PHONE_LENGTH:
        raise ValueError(f"Must be at most {MAX_PHONE_LENGTH} characters")
    try:
        number = phonenumbers.parse(value, settings.RECECO_PHONE_REGION)
    except phonenumbers.NumberParseException:
        raise ValueError("Not a phone number") from None
    if not phonenumbers.is_valid_number(number):
        raise ValueError("Not a valid phone number")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def mask_email(address: str | None) -> str | None:
    """``customer@example.com`` -> ``c*******@example.com``; the length is not revealed."""
    if not address:
        return address
    local, _, domain = address.rpartition("@")
    return f"{local[:1]}*******@{domain}"


def mask_phone(number: str | None) -> str | None:
    """``+2348012345689`` -> ``+234*******89``: country code and last two digits only."""
    if not number:
        return number
    try:
        country = phonenumbers.parse(number).country_code
    except phonenumbers.NumberParseException:
        country = ""
    return f"+{country}*******{number[-2:]}"


def mask_destination(channel: str, destination: str) -> str:
    """A delivery's destination masked: an email address if ``channel`` is "email", else a phone number."""
    return (mask_email(destination) if channel == "email" else mask_phone(destination)) or ""


def normalize_phone_channel(value: object) -> str | None:
    """Return "sms" or "whatsapp"; None when not given (null or blank), which means "sms".
    Raises ValueError otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(PHONE_CHANNEL_MESSAGE)
    if not value.strip():
        return None
    if value not in PHONE_CHANNELS:
        raise ValueError(PHONE_CHANNEL_MESSAGE)
    return value


def clean_phone_channel(value: object) -> str | None:
    """``normalize_phone_channel`` for an API input named ``phone_channel``: raises
    InvalidInput naming it."""
    try:
        return normalize_phone_channel(value)
    except ValueError as exc:
        raise InvalidInput(f"phone_channel: {exc}") from None


def clean_contact(email: object, phone: object) -> tuple[str | None, str | None]:
    """Return ``(email, phone)`` normalised, None for each one not given (null or blank).

    Raises InvalidInput: "Email or phone number required" when neither is given, or a
    message naming the invalid field.
    """
    given = {
        field: value
        for field, value in (("email", email), ("phone", phone))
        if value is not None and not (isinstance(value, str) and not value.strip())
    }
    if not given:
        raise InvalidInput(CONTACT_REQUIRED)
    cleaned = {}
    for field, normalize in (("email", normalize_email), ("phone", normalize_phone)):
        if field in given:
            try:
                cleaned[field] = normalize(given[field])
            except ValueError as exc:
                raise InvalidInput(f"{field}: {exc}") from None
    return cleaned.get("email"), cleaned.get("phone")


def phone_example() -> str:
    """A valid mobile number of RECECO_PHONE_REGION as people write it, e.g. ``0802 123 4567``."""
    number = phonenumbers.example_number_for_type(settings.RECECO_PHONE_REGION, phonenumbers.PhoneNumberType.MOBILE)
    if number is None:
        return "+234 802 123 4567"
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
