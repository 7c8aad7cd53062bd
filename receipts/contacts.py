"""Customer contact data: validation, normalisation and masking."""

import phonenumbers
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from receco.errors import InvalidInput
from receipts.models import Receipt

MAX_EMAIL_LENGTH = 254
CONTACT_REQUIRED = "Email or phone number required"


def normalize_email(value: object) -> str:
    """Return the address trimmed, with its domain lowercased.

    Raises ValueError, saying what is wrong, if it is not a valid address.
    """
    if not isinstance(value, str):
        raise ValueError("Must be a string")
    address = value.strip()
    if len(address) > MAX_EMAIL_LENGTH:
        raise ValueError(f"Must be at most {MAX_EMAIL_LENGTH} characters")
    try:
        validate_email(address)
    except ValidationError:
        raise ValueError("Not a valid email address") from None
    local, _, domain = address.rpartition("@")
    return f"{local}@{domain.lower()}"


def normalize_phone(value: object) -> str:
    """Return the number in E.164; numbers without a country code are read in RECECO_PHONE_REGION.

    Raises ValueError, saying what is wrong, if it is not a valid phone number.
    """
    if not isinstance(value, str):
        raise ValueError("Must be a string")
    if len(value) > 40:
        raise ValueError("Must be at most 40 characters")
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


def attach_contact(receipt: Receipt, email: str | None, phone: str | None) -> list:
    """Store cleaned contact data on the receipt and send the receipt there; a field given
    as None is left as it was. Returns the deliveries queued (see receipts.deliveries)."""
    from receipts.deliveries import schedule_deliveries  # deliveries imports this module

    changes = {"customer_email": email, "customer_phone": phone}
    changes = {field: value for field, value in changes.items() if value is not None}
    with transaction.atomic():
        for field, value in changes.items():
            setattr(receipt, field, value)
        receipt.save(update_fields=[*changes, "updated_at"])
        return schedule_deliveries(receipt, email=email, phone=phone)
