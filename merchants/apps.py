from django.apps import AppConfig


class MerchantsConfig(AppConfig):
    name = "merchants"
    verbose_name = "Merchants"

    def ready(self) -> None:
        from merchants import audit
        from merchants.admission import memory

        memory.connect_signals()
        audit.register()
