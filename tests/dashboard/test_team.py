"""A shop's team run by its owners (dashboard.team): issue 21's "no operator needed"
replayed: invite by email (one link, once, 72 hours), change a role, remove a member."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.utils import timezone

from dashboard import team
from merchants.models import AuditEntry, Invitation, MerchantMembership

pytestmark = pytest.mark.django_db

INVITE = "/admin/merchants/invitation/add/"
TEAM = "/admin/merchants/merchantmembership/"
IP = "203.0.113.7"


def _invite(client, merchant, email="ada@mama-put.example", role="member"):
    return client.post(INVITE, {"merchant": merchant.pk, "email": email, "role": role}, REMOTE_ADDR=IP)


def _link(message) -> str:
    return re.search(r"https?://[^/\s]+(/admin/join/[^/\s]+/)", message.body)[1]


PASSWORD = "Jollof-and-chapman-42"  # noqa: S105


def _join(client, link, username="ada", password=PASSWORD):
    return client.post(link, {"username": username, "password1": password, "password2": password})


def test_an_owner_invites_by_email_and_the_link_makes_a_member_once(client, owner, merchant):
    client.force_login(owner)
    response = _invite(client, merchant)
    assert response.status_code == 302
    assert response["Location"] == "/admin/merchants/invitation/"
    (message,) = mail.outbox
    assert message.to == ["ada@mama-put.example"]
    assert message.subject == "Join Mama Put Kitchen on the Receco dashboard"
    assert "olu invites you to join the team of Mama Put Kitchen on the Receco dashboard, as member." in message.body
    assert "within 72 hours" in message.body
    link = _link(message)
    token = link.split("/")[-2]
    assert not Invitation.objects.filter(digest__contains=token).exists()  # only a digest is kept
    client.logout()

    page = client.get(link)
    assert page.status_code == 200
    assert "Mama Put Kitchen" in page.content.decode()
    done = _join(client, link)
    assert done.status_code == 200
    assert "Your account is ready" in done.content.decode()
    ada = User.objects.get(username="ada")
    assert (ada.email, ada.is_staff, ada.is_superuser) == ("ada@mama-put.example", True, False)
    assert MerchantMembership.objects.get(user=ada).role == "member"
    signed_in = client.post("/admin/login/?next=/admin/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR=IP)
    assert signed_in["Location"] == "/admin/"
    client.logout()

    # Single use: the same link again makes nothing.
    again = _join(client, link, username="ada2")
    assert again.status_code == 410
    assert "has been used or has expired" in again.content.decode()
    assert not User.objects.filter(username="ada2").exists()


def test_the_invitation_form_says_what_its_button_does(client, owner, merchant):
    client.force_login(owner)
    page = client.get(INVITE).content.decode()
    assert '<input type="submit" value="Send invitation" class="default" name="_save">' in page
    assert 'value="Save"' not in page


def test_a_link_older_than_72_hours_makes_nothing(client, owner, merchant):
    client.force_login(owner)
    _invite(client, merchant)
    link = _link(mail.outbox[0])
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(link).status_code == 410
    assert _join(client, link).status_code == 410
    assert not User.objects.filter(username="ada").exists()


def test_a_made_up_link_makes_nothing(client, db):
    assert client.get("/admin/join/not-a-real-invitation-token/").status_code == 410


def test_the_invitation_expires_72_hours_after_it_is_sent(owner, merchant):
    invitation, _ = team.invite(merchant, "ada@mama-put.example", "member", owner)
    assert invitation.expires_at - invitation.created_at == timedelta(hours=72)


def test_the_link_is_used_once_even_by_two_at_the_same_moment(owner, merchant):
    _, token = team.invite(merchant, "ada@mama-put.example", "member", owner)
    team.accept(token, "ada", "Jollof-and-chapman-42")
    with pytest.raises(team.TeamError, match="has been used or has expired"):
        team.accept(token, "ada-again", "Jollof-and-chapman-42")


def test_a_member_cannot_invite(client, member, merchant):
    client.force_login(member)
    assert _invite(client, merchant).status_code == 403
    assert Invitation.objects.count() == 0


def test_an_owner_cannot_invite_to_another_shop(client, owner, other_merchant):
    client.force_login(owner)
    response = _invite(client, other_merchant)
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert Invitation.objects.count() == 0
    assert mail.outbox == []


def test_a_team_member_cannot_be_invited_twice(client, owner, member, merchant):
    member.email = "mia@mama-put.example"
    member.save()
    client.force_login(owner)
    response = _invite(client, merchant, email="MIA@mama-put.example")
    assert "MIA@mama-put.example is already in this shop&#x27;s team." in response.content.decode()


def test_an_owner_changes_a_role_and_it_is_in_the_trail(client, owner, member, merchant):
    membership = MerchantMembership.objects.get(user=member)
    client.force_login(owner)
    response = client.post(f"{TEAM}{membership.pk}/change/", {"role": "owner"}, REMOTE_ADDR=IP)
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.role == "owner"
    entry = AuditEntry.objects.filter(object_pk=str(membership.pk), action=AuditEntry.Action.UPDATE).get()
    assert (entry.actor, entry.remote_addr, entry.changes_dict["role"]) == (owner, IP, ["member", "owner"])


def test_the_last_owner_stays_an_owner(client, owner, merchant):
    membership = MerchantMembership.objects.get(user=owner)
    client.force_login(owner)
    response = client.post(f"{TEAM}{membership.pk}/change/", {"role": "member"})
    assert response.status_code == 200
    assert "A shop keeps at least one owner" in response.content.decode()
    response = client.post(f"{TEAM}{membership.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert MerchantMembership.objects.get(pk=membership.pk).role == "owner"


def test_an_owner_removes_a_member_who_then_cannot_sign_in(client, owner, member, merchant):
    membership = MerchantMembership.objects.get(user=member)
    client.force_login(owner)
    response = client.post(f"{TEAM}{membership.pk}/delete/", {"post": "yes"}, REMOTE_ADDR=IP)
    assert response.status_code == 302
    assert not MerchantMembership.objects.filter(pk=membership.pk).exists()
    member.refresh_from_db()
    assert member.is_active is False
    entry = AuditEntry.objects.filter(object_pk=str(membership.pk), action=AuditEntry.Action.DELETE).get()
    assert (entry.actor, entry.remote_addr) == (owner, IP)


def test_a_member_sees_the_team_and_changes_nothing(client, owner, member, merchant):
    membership = MerchantMembership.objects.get(user=owner)
    client.force_login(member)
    assert client.get(TEAM).status_code == 200
    assert client.post(f"{TEAM}{membership.pk}/change/", {"role": "member"}).status_code == 403
    assert client.post(f"{TEAM}{membership.pk}/delete/", {"post": "yes"}).status_code == 403
    assert MerchantMembership.objects.get(pk=membership.pk).role == "owner"


def test_an_owner_cannot_touch_another_shops_team(client, owner, outsider):
    theirs = MerchantMembership.objects.get(user=outsider)
    client.force_login(owner)
    assert "otto" not in client.get(TEAM).content.decode()
    assert client.post(f"{TEAM}{theirs.pk}/change/", {"role": "member"}).status_code == 404
    assert client.post(f"{TEAM}{theirs.pk}/delete/", {"post": "yes"}).status_code == 404
    assert MerchantMembership.objects.get(pk=theirs.pk).role == "owner"
