from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from auditlog.registry import auditlog

        from messaging import transports
        from receipts import hooks
        from webhooks import events, listeners
        from webhooks.models import Endpoint
        from webhooks.transport import WebhookTransport

        listeners.connect_signals()
        events.connect_signals()
        hooks.register(events.RecordEvent())
        transports.register(WebhookTransport())
        # Endpoints in the audit trail (merchants.audit): a secret is never written, only that it changed.
        auditlog.register(
            Endpoint,
            include_fields=["url", "description", "event_types", "enabled", "secret"],
            mask_fields=["secret"],
            mask_callable="merchants.audit.hide",
        )
