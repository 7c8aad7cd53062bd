"""Which endpoints of a merchant listen for an event: asked at every change to a receipt,
so it must cost nothing for the merchants that have none.

The answer is kept on the Merchant object itself. Sales get their merchant from the
memory of keys and merchants (merchants.admission.memory), which reads it again whenever
the shared version changes; saving or deleting an endpoint replaces that version, so the
answer lives exactly as long as the object it is kept on, and every process asks again
at its next call after a change. A merchant read for one request (no shared store) asks
every time: one small query.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.signals import post_delete, post_save

from merchants.admission import memory
from merchants.models import Merchant
from webhooks.models import Endpoint

_ATTRIBUTE = "_receco_webhook_endpoints"


@dataclass(frozen=True)
class Listener:
    endpoint_id: int
    event_types: tuple[str, ...]  # empty: all

    def wants(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types


def listeners(merchant: Merchant) -> tuple[Listener, ...]:
    """The merchant's enabled endpoints: one query the first time per Merchant object, none after."""
    if merchant.pk is None:  # a new test merchant, saved with its first receipt
        return ()
    known = merchant.__dict__.get(_ATTRIBUTE)
    if known is None:
        rows = Endpoint.objects.filter(merchant_id=merchant.pk, enabled=True).values_list("pk", "event_types")
        known = tuple(Listener(pk, tuple(types or ())) for pk, types in rows)
        merchant.__dict__[_ATTRIBUTE] = known
    return known


def listening(merchant: Merchant, event_type: str) -> list[int]:
    """Ids of the merchant's enabled endpoints that want ``event_type``."""
    return [listener.endpoint_id for listener in listeners(merchant) if listener.wants(event_type)]


def changed(**kwargs) -> None:
    """Make every process ask again which endpoints listen (after a change that sends no signal)."""
    memory.changed()


def connect_signals() -> None:
    """Make every process ask again whenever an endpoint is saved or deleted (WebhooksConfig.ready)."""
    post_save.connect(changed, sender=Endpoint, dispatch_uid="webhooks-endpoint-save")
    post_delete.connect(changed, sender=Endpoint, dispatch_uid="webhooks-endpoint-delete")
