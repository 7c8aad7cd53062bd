"""Delivery reports: what a provider says of a message after it took it (sent on,
delivered, read, failed with its reason), received by the callbacks (the callbacks app
turns HTTP into calls of ``record``; each provider's module parses and checks its own).

A report names the message by the id its provider gave it (Delivery.provider_message_id).
Reports come late, twice, or out of order, so each only moves a delivery's report on:
sent, then delivered, then read; failed only before delivered. A failure reported after
the outbox recorded the delivery sent makes it failed, with the provider's reason, and
sends ``delivery_failed`` (a ``delivery.failed`` webhook for the merchant) in the same
transaction. A report of a message whose customer's contact was erased, or of one this
service never sent, changes nothing. Nothing of the report but its status and reason is
kept: not the number, not the body.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from anymail.signals import tracking
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from messaging import transports
from messaging.models import Delivery, Report
from messaging.signals import delivery_failed
from receco.ops import metrics

logger = logging.getLogger(__name__)

_RANK = {"": 0, Report.SENT: 1, Report.FAILED: 2, Report.DELIVERED: 3, Report.READ: 4}
MAX_REASON_LENGTH = 300


@dataclass(frozen=True)
class Recorded:
    """What a report came to: the delivery it is of (None: none known), and whether it changed it."""

    delivery: Delivery | None
    changed: bool


def record(provider: str, message_id: str, report: str, reason: str = "", now: datetime | None = None) -> Recorded:
    """Record ``provider``'s ``report`` (a Report) of its message ``message_id``, with the
    provider's ``reason`` for a failure. Returns what it came to."""
    now = now or timezone.now()
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update()
            .filter(provider=provider, provider_message_id=message_id)
            .exclude(provider_message_id="")
            .exclude(destination="")
            .first()
        )
        if delivery is None:
            logger.info("delivery report from %s for a message not known here (or erased)", provider)
            return Recorded(None, False)
        if not _moves_on(delivery.report, report):
            return Recorded(delivery, False)
        delivery.report, delivery.reported_at = report, now
        delivery.report_reason = (
            transports.scrub(reason, delivery)[:MAX_REASON_LENGTH] if report == Report.FAILED else ""
        )
        fields = ["report", "report_reason", "reported_at", "updated_at"]
        failed_now = report == Report.FAILED and delivery.status == Delivery.Status.SENT
        if failed_now:
            delivery.status, delivery.last_error = Delivery.Status.FAILED, f"{provider}: {delivery.report_reason}"
            fields += ["status", "last_error"]
        delivery.save(update_fields=fields)
        if failed_now:
            delivery_failed.send(sender=Delivery, delivery=delivery)
    metrics.delivery(delivery.channel, f"report_{report}")
    logger.info("delivery %s (%s): %s reports %s", delivery.pk, delivery.masked_destination, provider, report)
    return Recorded(delivery, True)


def _moves_on(current: str, report: str) -> bool:
    if current == Report.FAILED or current == Report.READ:
        return False  # final
    if report == Report.FAILED:
        return current in ("", Report.SENT)
    return _RANK[report] > _RANK[current]


def connect_signals() -> None:
    """MessagingConfig.ready: the email provider's tracking webhooks (django-anymail's
    ``tracking`` signal) are delivery reports too."""
    tracking.connect(_email_tracked, dispatch_uid="messaging-email-tracking")


# anymail's normalised events: the ones that say where the message is.
_EMAIL_EVENTS = {
    "sent": Report.SENT,
    "delivered": Report.DELIVERED,
    "opened": Report.READ,
    "bounced": Report.FAILED,
    "rejected": Report.FAILED,
    "failed": Report.FAILED,
}


def _email_tracked(sender, event, esp_name, **kwargs) -> None:
    report = _EMAIL_EVENTS.get(event.event_type)
    if report is None or not event.message_id:
        return
    reason = (event.reject_reason or event.description or "") if report == Report.FAILED else ""
    record(settings.RECECO_EMAIL_PROVIDER, str(event.message_id), report, str(reason))
