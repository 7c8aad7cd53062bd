from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from auditlog.registry import auditlog

        from webhooks import listeners  # noqa: F401 (connects the signals that keep the memory current)
        from webhooks.models import Endpoint

        # In the audit trail (merchants.audit): what changed, and of the secret only that it did.
        auditlog.register(
            Endpoint,
            include_fields=["url", "description", "event_types", "enabled", "secret"],
            mask_fields=["secret"],
            mask_callable="merchants.audit.hide",
        )
