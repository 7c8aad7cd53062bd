"""The audit trail: every staff action that moves money or access, with who, when, from
which address and what changed (django-auditlog, writing merchants.models.AuditEntry).

Recorded: API keys made, renamed, rotated and revoked; webhook endpoints made, changed,
deleted and their secrets rolled (a secret itself never: "changed" is all it says);
members added, removed or given another role; a shop's identity and settings changed;
refunds and voids, whoever made them (a refund from the API names the API key that made
it, ``API key <prefix>``). Sales are not: a sale pays one attribute check here, no query.

The actor and address come from AuditMiddleware: the signed-in user, and the client
address as the rest of the service counts it (RECECO_TRUSTED_PROXY_COUNT honoured,
unlike django-auditlog's own middleware, which believes any X-Forwarded-For).
"""

from auditlog.middleware import AuditlogMiddleware
from auditlog.registry import auditlog
from auditlog.signals import pre_log

from merchants import api_actor
from merchants.models import ApiKey, AuditEntry, Invitation, Merchant, MerchantMembership
from receco.lib.addresses import UNKNOWN, client_ip

SECRET = "(secret)"
MERCHANT_FIELDS = [
    "name", "logo_url", "accent_color", "legal_name", "address", "phone", "support_email", "tax_id_scheme",
    "tax_id", "registration_number", "country", "time_zone", "return_policy", "receipt_footer", "require_api_key",
    "status", "is_test", "receipt_prefix", "checked_legal_name", "checked_registration_number",
]  # fmt: skip


VERBS = {
    AuditEntry.Action.CREATE: "made",
    AuditEntry.Action.UPDATE: "changed",
    AuditEntry.Action.DELETE: "removed",
    AuditEntry.Action.ACCESS: "read",
}
# What the trail calls each audited thing, in a shop owner's words.
KINDS = {
    "merchant": "Shop",
    "apikey": "API key",
    "merchantmembership": "Team member",
    "invitation": "Invitation",
    "endpoint": "Webhook endpoint",
    "receipt": "Refund",
    "void": "Void",
}


def headline(entry: AuditEntry) -> str:
    """What an entry says was done, as its list row and its own page head it: ``API key
    made: Till 2``; a void or refund as what the owner did to the sale (the record the trail
    keeps is "made", the sale is what they acted on): ``Voided sale QXD6NT``, ``Refunded
    ₦322.50 of sale CARD01: refund R7K2PQ``."""
    model, changes = entry.content_type.model, entry.changes_dict or {}
    if entry.action == AuditEntry.Action.CREATE and model == "void":
        return f"Voided {entry.object_repr}"
    if (
        entry.action == AuditEntry.Action.CREATE
        and model == "receipt"
        and {"amount", "refund of sale"} <= changes.keys()
    ):
        refund = entry.object_repr.split(" of sale ")[0]
        return f"Refunded {changes['amount'][-1]} of sale {changes['refund of sale'][-1]}: refund {refund}"
    kind = KINDS.get(model, entry.content_type.name)
    return f"{kind} {VERBS.get(entry.action, 'changed')}: {entry.object_repr}"


def hide(value) -> str:
    """django-auditlog's mask for secrets: nothing of them, only that they changed."""
    return SECRET


def _not_a_staff_action(sender, instance, action, **kwargs) -> bool | None:
    # A test- merchant made by the first sale naming it is nobody's action (and the sale's).
    if sender is Merchant and action == AuditEntry.Action.CREATE and instance.belongs_to_nobody:
        return False
    return None


def record_change(instance, changes: dict) -> None:
    """Write the trail's entry for a change django-auditlog cannot see (a queryset's update)."""
    AuditEntry.objects.log_create(instance, action=AuditEntry.Action.UPDATE, changes=changes, force_log=True)


def log_api_change(instance, changes: dict, named: str | None = None) -> None:
    """Write the trail's entry for something made through the API or the dashboard (a
    refund, a void): the actor is the API key that made it (merchants.api_actor), or the
    signed-in user; ``named`` is what the trail calls ``instance`` (by default its str)."""
    actor = api_actor.current()
    extra = {"actor": actor} if actor else None
    names = {"object_repr": named} if named else {}
    AuditEntry.objects.log_create(
        instance, action=AuditEntry.Action.CREATE, changes=changes, force_log=True, additional_data=extra, **names
    )


class AuditMiddleware(AuditlogMiddleware):
    """django-auditlog's middleware with the service's own client address, and the user
    looked up only when an entry is written."""

    def get_extra_data(self, request) -> dict:
        # The public hook django-auditlog's middleware fills each entry's context from.
        ip = client_ip(request)
        return {
            "remote_addr": None if ip == UNKNOWN else ip,
            "remote_port": None,
            # request.user is lazy: a customer's receipt page never loads a session for this.
            "actor": getattr(request, "user", None),
        }


def register() -> None:
    """Register the audited models with django-auditlog (MerchantsConfig.ready)."""
    auditlog.register(Merchant, include_fields=MERCHANT_FIELDS)
    auditlog.register(ApiKey, include_fields=["type", "name", "expires_at", "revoked_at", "rotated_to"])
    # The entry names the user and the shop; the role is what changes.
    auditlog.register(MerchantMembership, include_fields=["role"])
    auditlog.register(Invitation, include_fields=["email", "role", "accepted_at"])
    pre_log.connect(_not_a_staff_action, dispatch_uid="merchants.audit.staff_only")
