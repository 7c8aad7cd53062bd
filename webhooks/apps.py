from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from webhooks import listeners  # noqa: F401 (connects the signals that keep the memory current)
