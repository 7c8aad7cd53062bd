"""Shared look-ups of the operators' commands, failing with a CommandError that says why."""

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from merchants.keys import find_key
from merchants.models import ApiKey, Merchant


def merchant_named(string_id: str) -> Merchant:
    try:
        return Merchant.objects.get(string_id=string_id)
    except Merchant.DoesNotExist:
        raise CommandError(f"No merchant with id {string_id!r}") from None


def merchant_for_key(string_id: str) -> Merchant:
    """The merchant to make a key for; an unknown test- merchant is created, as a sale would."""
    try:
        return Merchant.objects.for_key(string_id)
    except Merchant.DoesNotExist:
        raise CommandError(f"No merchant with id {string_id!r}") from None
    except ValidationError as exc:
        raise CommandError(f"Not a merchant id: {string_id!r}: {' '.join(exc.messages)}") from None


def key_named(key_or_prefix: str) -> ApiKey:
    try:
        return find_key(key_or_prefix)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    except ApiKey.DoesNotExist:
        raise CommandError("No such API key") from None
