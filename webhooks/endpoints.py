"""Making webhook endpoints and rolling their secrets: the rules the admin and the
``createwebhook`` command share; and the listeners' endpoints (``listenwebhooks``), which
expire unless the listener renews them."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from merchants.models import Merchant
from webhooks.addresses import validate_url
from webhooks.models import Endpoint, EventType
from webhooks.signing import new_secret

UNKNOWN_EVENT = "Unknown event type {name!r}; choose from {choices}"
# A listener's endpoint lives this long after its listener last renewed it.
LISTENER_LEASE = timedelta(minutes=2)


def validate_event_types(names: list[str]) -> list[str]:
    """``names`` without repeats, in the order of EventType; raises ValidationError for an unknown one."""
    for name in names:
        if name not in EventType.values:
            raise ValidationError(UNKNOWN_EVENT.format(name=name, choices=", ".join(EventType.values)), code="invalid")
    return [value for value in EventType.values if value in names]


def create_endpoint(
    merchant: Merchant, url: str, event_types: list[str] = (), description: str = "", expires_at=None
) -> Endpoint:
    """Make an enabled endpoint of ``merchant`` with a fresh secret (on ``endpoint.secret``).

    ``event_types`` empty: every type. ``expires_at``: a listener's endpoint, which expires
    then unless renewed. Raises ValidationError for a URL or event type not allowed.
    """
    validate_url(url)
    endpoint = Endpoint(
        merchant=merchant,
        url=url,
        event_types=validate_event_types(list(event_types)),
        description=description.strip()[:200],
        secret=new_secret(),
        expires_at=expires_at,
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


def renew(endpoint: Endpoint, now: datetime | None = None) -> bool:
    """Give a listener's endpoint LISTENER_LEASE more from ``now``; False when its time was
    up already, or it is gone (removed by the sweep, or deleted in the dashboard)."""
    now = now or timezone.now()
    return bool(Endpoint.objects.filter(pk=endpoint.pk, expires_at__gt=now).update(expires_at=now + LISTENER_LEASE))


def remove_expired(now: datetime | None = None) -> int:
    """Delete the listeners' endpoints whose time is up, with their deliveries; return how many."""
    expired = Endpoint.objects.filter(expires_at__lte=now or timezone.now())
    count = 0
    for endpoint in expired:
        endpoint.delete()
        count += 1
    return count
