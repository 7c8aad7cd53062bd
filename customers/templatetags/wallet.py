"""``{% wallet_buttons receipt %}``: the "Add to Apple Wallet" and "Add to Google Wallet"
buttons of a receipt, each only when the operator configured that wallet; nothing at
all when neither is. The receipt page uses it, and so may any page that lists receipts."""

from django import template
from django.urls import reverse

from receipts.models import Receipt
from receipts.wallet import credentials

register = template.Library()


@register.inclusion_tag("receipts/wallet_buttons.html", takes_context=True)
def wallet_buttons(context: template.Context, receipt: Receipt) -> dict:
    """The buttons' links; ``wallet_error`` from the page's context, a refusal to show
    beside them."""
    kwargs = {"reference": receipt.token}
    return {
        "apple_url": reverse("receipts:apple_pass", kwargs=kwargs) if credentials.apple() else None,
        "google_url": reverse("receipts:google_pass", kwargs=kwargs) if credentials.google() else None,
        "error": context.get("wallet_error"),
    }
