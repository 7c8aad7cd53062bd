"""A shop's team, run by its owners with no operator: invitations by email, roles, removal.

An invitation's link makes a new dashboard account for the invitee, who chooses a user
name and a password; it works once, within 72 hours (Invitation.VALIDITY). A merchant
keeps at least one owner: the last one can be neither removed nor made a member.
"""

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from merchants.models import Invitation, Merchant, MerchantMembership

LAST_OWNER = "A shop keeps at least one owner: make someone else an owner first."
ALREADY_MEMBER = "{email} is already in this shop's team."
INVITATION_UNUSABLE = "This invitation link has been used or has expired: ask the shop's owner for a new one."


class TeamError(ValueError):
    """A change the team rules refuse; its message says why, in the owner's words."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invite(merchant: Merchant, email: str, role: str, invited_by) -> tuple[Invitation, str]:
    """Make an invitation and return it with its link's secret (the only copy). Raises
    TeamError when a team member already has that email address."""
    email = get_user_model().objects.normalize_email(email).strip()
    if MerchantMembership.objects.filter(merchant=merchant, user__email__iexact=email).exists():
        raise TeamError(ALREADY_MEMBER.format(email=email))
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    invitation = Invitation.objects.create(
        merchant=merchant,
        email=email,
        role=role,
        digest=_digest(token),
        invited_by=invited_by,
        created_at=now,
        expires_at=now + Invitation.VALIDITY,
    )
    return invitation, token


def send_invitation(invitation: Invitation, link: str) -> None:
    """Email the invitee the link that makes their account."""
    context = {"invitation": invitation, "link": link, "hours": int(Invitation.VALIDITY.total_seconds() // 3600)}
    subject = f"Join {invitation.merchant.name} on the Receco dashboard"
    body = render_to_string("merchants/invitation_email.txt", context)
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [invitation.email])


def usable_invitation(token: str) -> Invitation | None:
    """The invitation whose link carries ``token``, if it still works; None otherwise."""
    invitation = Invitation.objects.select_related("merchant").filter(digest=_digest(token)).first()
    return invitation if invitation is not None and invitation.usable() else None


def accept(token: str, username: str, password: str) -> AbstractBaseUser:
    """Use the invitation: make the invitee's staff account and membership; return the
    user. Raises TeamError when the link was used (even a moment ago) or has expired."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().filter(digest=_digest(token)).first()
        if invitation is None or not invitation.usable():
            raise TeamError(INVITATION_UNUSABLE)
        user = get_user_model().objects.create_user(username, email=invitation.email, password=password, is_staff=True)
        MerchantMembership.objects.create(user=user, merchant=invitation.merchant, role=invitation.role)
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
    return user


def change_role(membership: MerchantMembership, role: str) -> None:
    """Give a team member another role. Raises TeamError for the shop's last owner."""
    with transaction.atomic():
        _lock_team(membership.merchant_id)
        if membership.role == MerchantMembership.Role.OWNER and role != membership.role:
            _keep_an_owner(membership)
        membership.role = role
        membership.save(update_fields=["role"])


def remove(membership: MerchantMembership) -> None:
    """Take a member out of the team; a user left in no team can no longer sign in.
    Raises TeamError for the shop's last owner."""
    with transaction.atomic():
        _lock_team(membership.merchant_id)
        if membership.role == MerchantMembership.Role.OWNER:
            _keep_an_owner(membership)
        user = membership.user
        membership.delete()
        if not user.is_superuser and not MerchantMembership.objects.filter(user=user).exists():
            user.is_active = False
            user.save(update_fields=["is_active"])


def _lock_team(merchant_id: int) -> None:
    # Two owners demoting each other at once must not leave the shop with none.
    Merchant.objects.select_for_update().filter(pk=merchant_id).first()


def check_an_owner_stays(membership: MerchantMembership) -> None:
    """Raise TeamError if ``membership`` is its shop's last owner."""
    _keep_an_owner(membership)


def _keep_an_owner(membership: MerchantMembership) -> None:
    owners = MerchantMembership.objects.filter(merchant_id=membership.merchant_id, role=MerchantMembership.Role.OWNER)
    if not owners.exclude(pk=membership.pk).exists():
        raise TeamError(LAST_OWNER)
