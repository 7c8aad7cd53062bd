"""Making webhook endpoints and rolling their secrets: the rules the admin and the
``createwebhook`` command share."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from merchants.models import Merchant
from webhooks.addresses import validate_url
from webhooks.models import Endpoint, EventType
from webhooks.signing import new_secret

UNKNOWN_EVENT = "Unknown event type {name!r}; choose from {choices}"


def validate_event_types(names: list[str]) -> list[str]:
    """``names`` without repeats, in the order of EventType; raises ValidationError for an unknown one."""
    for name in names:
        if name not in EventType.values:
            raise ValidationError(UNKNOWN_EVENT.format(name=name, choices=", ".join(EventType.values)), code="invalid")
    return [value for value in EventType.values if value in names]


def create_endpoint(merchant: Merchant, url: str, event_types: list[str] = (), description: str = "") -> Endpoint:
    """Make an enabled endpoint of ``merchant`` with a fresh secret (on ``endpoint.secret``).

    ``event_types`` empty: every type. Raises ValidationError for a URL or event type not allowed.
    """
    validate_url(url)
    endpoint = Endpoint(
        merchant=merchant,
        url=url,
        event_types=validate_event_types(list(event_types)),
        description=description.strip()[:200],
        secret=new_secret(),
    )
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def roll_secret(endpoint: Endpoint, grace: timedelta) -> str:
    """Give ``endpoint`` a new secret and return it. The old one signs too for ``grace``
    (none: it stops now), so that receivers can switch without missing an event."""
    with transaction.atomic():
        endpoint = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
        now = timezone.now()
        endpoint.previous_secret = endpoint.secret if grace > timedelta(0) else ""
        endpoint.previous_secret_expires_at = now + grace if grace > timedelta(0) else None
        endpoint.secret = new_secret()
        endpoint.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"])
    return endpoint.secret
