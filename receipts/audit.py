"""Refunds and voids in the audit trail (merchants.audit), whoever made them: a refund or
void made through the API names the API key it came with. Sales are not audited: a sale
pays one attribute check here, no query."""

from django.db.models.signals import post_save

from merchants import audit
from merchants.models import AUDIT_SCOPES
from receipts.models import Receipt, Void
from receipts.money import format_amount


def register() -> None:
    """Write the trail's entries of refunds and voids (ReceiptsConfig.ready)."""
    AUDIT_SCOPES[Void] = _merchant_of_void
    post_save.connect(_money_moved, sender=Receipt, dispatch_uid="merchants.audit.refunds")
    post_save.connect(_voided, sender=Void, dispatch_uid="merchants.audit.voids")


def _merchant_of_void(void: Void) -> int | None:
    return Receipt.objects.filter(pk=void.receipt_id).values_list("merchant_id", flat=True).first()


def _money_moved(sender, instance: Receipt, created: bool, raw: bool = False, **kwargs) -> None:
    # On every sale's path: one attribute check, and nothing more unless it is a refund.
    if not created or raw or instance.refund_of_id is None:
        return
    amount = format_amount(instance.total_amount, instance.currency)
    audit.log_api_change(instance, {"refund of sale": ["", str(instance.refund_of_id)], "amount": ["", amount]})


def _voided(sender, instance: Void, created: bool, raw: bool = False, **kwargs) -> None:
    if not created or raw:
        return
    audit.log_api_change(instance, {"sale": ["", str(instance.receipt_id)], "reason": ["", instance.reason]})
