from django.apps import AppConfig


class EInvoicingConfig(AppConfig):
    name = "einvoicing"
    verbose_name = "E-invoicing (NRS)"

    def ready(self):
        from auditlog.registry import auditlog

        from einvoicing import hooks, state
        from einvoicing.models import EInvoicing
        from einvoicing.transport import EInvoiceTransport
        from messaging import transports
        from receipts import annexes
        from receipts import hooks as receipt_hooks

        transports.register(EInvoiceTransport())
        receipt_hooks.register(hooks.ReportToNRS())
        # Its IRN and NRS QR code beside a stamped receipt, on every page that shows it.
        annexes.register(state.annex)
        hooks.connect_signals()
        # Settings in the audit trail (merchants.audit): a credential is never written, only that it changed.
        secrets = ["sealed_api_key", "sealed_api_secret", "sealed_crypto_keys"]
        auditlog.register(
            EInvoicing,
            include_fields=["enabled", "business_id", "service_id", "city", "postal_zone", *secrets],
            mask_fields=secrets,
            mask_callable="merchants.audit.hide",
        )
