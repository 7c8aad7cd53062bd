"""The webhook channel of the outbox: how an event is sent to an endpoint, and what each
attempt leaves behind (messaging.transports).

``send`` signs the event's body with the endpoint's secrets and POSTs it (webhooks.client:
address checks, no redirect, TIMEOUT for the whole exchange); nothing goes to a listener's
endpoint past its expiry, and the sweep removes such endpoints. A 2xx answer is success; a
timeout, a connection error or any other answer is tried again after 1, 3, 9, 27 minutes
… (at most 6 hours) for RETRY_FOR, then the delivery fails. ``recorded`` keeps every try
as an Attempt, and an endpoint whose delivery failed that way, with no success since it
began failing, is disabled and its merchant's owners are told by email (webhooks.notices).
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from messaging.models import Delivery
from messaging.transports import Dropped, Failed, Outcome, Retry, Sent, Transport
from receco.ops import metrics
from webhooks import client, endpoints, listeners, notices
from webhooks.models import WEBHOOK, Attempt, Endpoint, Event
from webhooks.signing import EVENT_ID_HEADER, HEADER, signature_header

TIMEOUT = 10.0  # seconds for the whole exchange: connect, TLS, the request, every byte of the answer
RETRY_FOR = timedelta(days=3)
_MAX_ERROR_LENGTH = 300


class WebhookTransport(Transport):
    channel, label = WEBHOOK, "Webhook"
    lane_per_destination = True  # each endpoint is a party of its own

    def retry(self) -> Retry:
        return Retry(timedelta(minutes=1), 3, timedelta(hours=6), within=RETRY_FOR)

    def send(self, delivery: Delivery) -> Sent:
        endpoint, event = _target(delivery)
        if endpoint is None or event is None:
            # Deleted while the sale that made the delivery was being stored (they have no
            # constraint in the database: webhooks.models): it has nowhere to go.
            raise Dropped("its endpoint or event no longer exists")
        if endpoint.expired():
            # A listener's (listenwebhooks) that stopped renewing it: whatever listens on
            # its port now is not the merchant's. The sweep removes the endpoint.
            raise Dropped("its listener's endpoint expired")
        if not endpoint.enabled:
            raise Failed("endpoint disabled", permanent=True)
        body = event.body.encode()
        headers = {
            HEADER: signature_header(endpoint.signing_secrets(), int(time.time()), body),
            EVENT_ID_HEADER: event.public_id,
        }
        try:
            answer = client.post(endpoint.url, body, headers, TIMEOUT)
        except client.SendError as failure:
            raise Failed(str(failure), duration_ms=failure.duration_ms) from None
        if not 200 <= answer.status < 300:
            raise Failed(f"answered HTTP {answer.status}", status_code=answer.status, duration_ms=answer.duration_ms)
        return Sent(status_code=answer.status, duration_ms=answer.duration_ms)

    def sweep(self, now) -> None:
        """Remove the listeners' endpoints whose time is up."""
        endpoints.remove_expired(now)

    def recorded(self, delivery: Delivery, outcome: Outcome) -> None:
        """The attempt, and the endpoint's state: failing since the first failure after a
        success, disabled when a delivery failed for good that way."""
        now = timezone.now()
        Attempt.objects.create(
            delivery_id=delivery.pk,
            succeeded=outcome.succeeded,
            status_code=outcome.status_code,
            duration_ms=outcome.duration_ms,
            error=outcome.error[:_MAX_ERROR_LENGTH],
            next_attempt_at=outcome.retry_at,
        )
        metrics.webhook_attempt("succeeded" if outcome.succeeded else outcome.status)
        endpoint = _target(delivery)[0]
        if endpoint is None or outcome.permanent:
            return
        if outcome.succeeded:
            Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=False).update(failing_since=None)
            return
        Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=now)
        if outcome.status == Delivery.Status.FAILED and endpoint.enabled and endpoint.failing_since is not None:
            _disable(endpoint, now)


def _disable(endpoint: Endpoint, now) -> None:
    reason = f"Disabled {now:%Y-%m-%d %H:%M} UTC: its deliveries failed for {RETRY_FOR.days} days"
    if Endpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
        enabled=False, disabled_reason=reason, updated_at=now
    ):
        listeners.changed()  # .update() sends no post_save
        transaction.on_commit(lambda: notices.endpoint_disabled(endpoint, reason), robust=True)


def _target(delivery: Delivery) -> tuple[Endpoint | None, Event | None]:
    """The delivery's endpoint and event (None for one deleted), read once per delivery object."""
    known = delivery.__dict__.get("_webhook_target")
    if known is None:
        endpoint = Endpoint.objects.filter(pk=int(delivery.destination)).first()
        event = Event.objects.filter(pk=delivery.payload_id).first()
        known = delivery.__dict__["_webhook_target"] = (endpoint, event)
    return known
