"""Every ModelAdmin of the dashboard, one module per domain app. The admin's autodiscovery
imports this package (``dashboard.admin``); importing it registers them all with the
dashboard's site (dashboard.sites)."""

from dashboard.admin import audit, einvoicing, merchants, messaging, receipts, webhooks

__all__ = ["audit", "einvoicing", "merchants", "messaging", "receipts", "webhooks"]
