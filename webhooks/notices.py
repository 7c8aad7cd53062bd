"""Telling a merchant's owners that the service disabled one of their webhook endpoints."""

import logging

from django.conf import settings
from django.core.mail import send_mail

from merchants.models import MerchantMembership
from webhooks.models import Endpoint

logger = logging.getLogger(__name__)


def endpoint_disabled(endpoint: Endpoint, reason: str) -> int:
    """Email every owner of the endpoint's merchant who has an address; return how many were emailed."""
    owners = MerchantMembership.objects.filter(
        merchant_id=endpoint.merchant_id, role=MerchantMembership.Role.OWNER, user__is_active=True
    ).exclude(user__email="")
    addresses = sorted({membership.user.email for membership in owners.select_related("user")})
    if not addresses:
        logger.warning("webhook endpoint %s disabled; its merchant has no owner with an email address", endpoint.pk)
        return 0
    admin_url = f"{settings.RECECO_WEB_URL}/admin/webhooks/endpoint/{endpoint.pk}/change/"
    send_mail(
        subject=f"Receco: webhook endpoint {endpoint.url} disabled",
        message=(
            f"Your webhook endpoint {endpoint.url} did not accept the events sent to it.\n\n"
            f"{reason}. No more events are sent to it until it is enabled again:\n{admin_url}\n\n"
            "The events it missed are listed there, and each can be sent again."
        ),
        from_email=None,
        recipient_list=addresses,
    )
    return len(addresses)
