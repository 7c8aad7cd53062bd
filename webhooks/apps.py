from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from messaging import transports
        from receipts import hooks
        from webhooks import events, listeners
        from webhooks.transport import WebhookTransport

        listeners.connect_signals()
        events.connect_signals()
        hooks.register(events.RecordEvent())
        transports.register(WebhookTransport())
