from django.apps import AppConfig


class ReceiptsConfig(AppConfig):
    name = "receipts"
    verbose_name = "Receipts"

    def ready(self) -> None:
        from django.core import checks
        from django.core.signals import setting_changed

        from receipts import audit
        from receipts.rendering import messages
        from receipts.wallet import credentials

        audit.register()
        # Wallet credentials configured but unreadable stop the process here, naming the variable.
        credentials.apple()
        credentials.google()
        setting_changed.connect(credentials.forget, dispatch_uid="receipts.wallet.credentials")
        checks.register(messages.check_text_message)
