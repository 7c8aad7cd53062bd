"""Shared look-ups of the operators' commands, failing with a CommandError that says why."""

from django.core.management.base import CommandError

from merchants.keys import find_key
from merchants.models import ApiKey, Merchant


def merchant_named(string_id: str) -> Merchant:
    try:
        return Merchant.objects.get(string_id=string_id)
    except Merchant.DoesNotExist:
        raise CommandError(f"No merchant with id {string_id!r}") from None


def key_named(key_or_prefix: str) -> ApiKey:
    try:
        return find_key(key_or_prefix)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    except ApiKey.DoesNotExist:
        raise CommandError("No such API key") from None
