import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from merchants.models import MerchantMembership

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-staple"


def test_it_creates_a_staff_member(merchant, capsys):
    call_command("createmerchantuser", merchant.string_id, "ada", "--password", PASSWORD)
    user = User.objects.get(username="ada")
    assert user.is_staff
    assert not user.is_superuser
    assert user.check_password(PASSWORD)
    assert MerchantMembership.objects.get(user=user).role == "member"
    assert capsys.readouterr().out == "Created staff user ada: member of mama-put; sign in at /admin/\n"


def test_owner_makes_an_owner(merchant, capsys):
    call_command("createmerchantuser", merchant.string_id, "ada", "--password", PASSWORD, "--owner")
    assert MerchantMembership.objects.get(user__username="ada", merchant=merchant).role == "owner"


def test_an_existing_user_joins_another_merchant(merchant, other_merchant, capsys):
    call_command("createmerchantuser", merchant.string_id, "ada", "--password", PASSWORD)
    call_command("createmerchantuser", other_merchant.string_id, "ada", "--owner")
    assert User.objects.get(username="ada").check_password(PASSWORD)
    assert set(MerchantMembership.objects.values_list("merchant__string_id", "role")) == {
        ("mama-put", "member"),
        ("corner-shop", "owner"),
    }
    assert "Updated staff user ada: owner of corner-shop" in capsys.readouterr().out


def test_the_user_can_sign_in_and_see_the_dashboard(merchant, client, capsys):
    call_command("createmerchantuser", merchant.string_id, "ada", "--password", PASSWORD, "--owner")
    signed_in = client.post("/admin/login/?next=/admin/", {"username": "ada", "password": PASSWORD})
    assert signed_in.status_code == 302
    response = client.get("/admin/")
    assert response.status_code == 200
    assert b"/admin/merchants/apikey/" in response.content
    assert b"/admin/receipts/receipt/" in response.content


def test_a_new_user_needs_a_password(merchant):
    with pytest.raises(CommandError, match="ada is a new user: give --password"):
        call_command("createmerchantuser", merchant.string_id, "ada")


def test_weak_passwords_are_refused(merchant):
    with pytest.raises(CommandError, match="--password: This password is too short"):
        call_command("createmerchantuser", merchant.string_id, "ada", "--password", "abc")
    assert not User.objects.exists()


def test_it_refuses_an_unknown_merchant(db):
    with pytest.raises(CommandError, match="No merchant with id 'nobody'"):
        call_command("createmerchantuser", "nobody", "ada", "--password", PASSWORD)
