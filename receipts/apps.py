from django.apps import AppConfig


class ReceiptsConfig(AppConfig):
    name = "receipts"
    verbose_name = "Receipts"

    def ready(self) -> None:
        from receipts import audit

        audit.register()
