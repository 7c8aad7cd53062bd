"""Refunds and voids in the audit trail (merchants.audit), whoever made them: registered by
ReceiptsConfig.ready()."""

from django.db.models.signals import post_save

from merchants.audit import log_api_change
from receipts.models import Receipt, Void
from receipts.money import format_amount


def _money_moved(sender, instance: Receipt, created: bool, raw: bool = False, **kwargs) -> None:
    # On every sale's path: one attribute check, and nothing more unless it is a refund.
    if not created or raw or instance.refund_of_id is None:
        return
    # The sale by the code its shop finds it by (the refund keeps it: no query), not a row id.
    sale = instance.detail("refund_of_short_code") or str(instance.refund_of_id)
    amount = format_amount(instance.total_amount, instance.currency)
    changes = {"refund of sale": ["", sale], "amount": ["", amount]}
    if instance.detail("reason"):
        changes["reason"] = ["", instance.detail("reason")]
    log_api_change(instance, changes, named=f"{instance.short_code} of sale {sale}")


def _voided(sender, instance: Void, created: bool, raw: bool = False, **kwargs) -> None:
    if not created or raw:
        return
    sale = instance.receipt.short_code  # the sale the void was made with: no query
    log_api_change(instance, {"sale": ["", sale], "reason": ["", instance.reason]}, named=f"sale {sale}")


def register() -> None:
    post_save.connect(_money_moved, sender=Receipt, dispatch_uid="receipts.audit.refunds")
    post_save.connect(_voided, sender=Void, dispatch_uid="receipts.audit.voids")
