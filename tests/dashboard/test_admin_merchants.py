"""The merchant record in the admin: scoped, owners edit their settings, only the
operator suspends."""

import pytest

from merchants.models import Merchant

pytestmark = pytest.mark.django_db

LIST = "/admin/merchants/merchant/"


def _change(merchant):
    return f"/admin/merchants/merchant/{merchant.pk}/change/"


def _form(merchant, **changes):
    values = {
        "name": merchant.name,
        "logo_url": merchant.logo_url,
        "accent_color": merchant.accent_color,
        "require_api_key": "on" if merchant.require_api_key else "",
        "country": merchant.country,
        "time_zone": merchant.time_zone,
    }
    values.update(changes)
    return {key: value for key, value in values.items() if value != ""}


def test_staff_see_only_their_own_merchant(client, owner, merchant, other_merchant):
    client.force_login(owner)
    content = client.get(LIST).content.decode()
    assert "mama-put" in content
    assert "corner-shop" not in content


def test_an_outsider_cannot_open_the_merchant(client, outsider, merchant):
    client.force_login(outsider)
    response = client.get(_change(merchant))
    assert response.status_code == 404
    assert merchant.name not in response.content.decode()


def test_an_owner_edits_the_merchants_settings(client, owner, merchant):
    client.force_login(owner)
    response = client.post(_change(merchant), _form(merchant, name="Mama Put", require_api_key="on"))
    assert response.status_code == 302, response.content
    merchant.refresh_from_db()
    assert (merchant.name, merchant.require_api_key) == ("Mama Put", True)


def test_an_owner_cannot_unsuspend_or_rename_the_id(client, owner, merchant):
    merchant.set_suspended(True)
    client.force_login(owner)
    client.post(_change(merchant), {**_form(merchant), "status": "active", "string_id": "mine"})
    merchant.refresh_from_db()
    assert (merchant.status, merchant.string_id) == ("suspended", "mama-put")


def test_a_member_only_looks(client, member, merchant):
    client.force_login(member)
    assert client.get(_change(merchant)).status_code == 200
    assert client.post(_change(merchant), _form(merchant, name="Taken over")).status_code == 403
    merchant.refresh_from_db()
    assert merchant.name == "Mama Put Kitchen"


def test_staff_cannot_add_merchants(client, owner):
    client.force_login(owner)
    assert client.get("/admin/merchants/merchant/add/").status_code == 403


def test_the_superuser_suspends_and_reactivates(client, superuser, merchant, other_merchant):
    client.force_login(superuser)
    client.post(LIST, {"action": "suspend", "_selected_action": [merchant.pk]})
    assert Merchant.objects.get(pk=merchant.pk).is_suspended
    assert not Merchant.objects.get(pk=other_merchant.pk).is_suspended
    client.post(LIST, {"action": "reactivate", "_selected_action": [merchant.pk]})
    assert not Merchant.objects.get(pk=merchant.pk).is_suspended


def test_an_owner_cannot_suspend_or_reactivate(client, owner, merchant):
    merchant.set_suspended(True)
    client.force_login(owner)
    assert b'value="reactivate"' not in client.get(LIST).content
    client.post(LIST, {"action": "reactivate", "_selected_action": [merchant.pk]})
    assert Merchant.objects.get(pk=merchant.pk).is_suspended


def test_merchant_text_is_escaped(client, owner, merchant):
    merchant.name = '<script>alert("x")</script>'
    merchant.save()
    client.force_login(owner)
    for url in (LIST, _change(merchant), f"/admin/merchants/merchant/{merchant.pk}/usage/"):
        content = client.get(url).content.decode()
        assert "<script>alert" not in content, url
        assert "&lt;script&gt;alert" in content, url


def test_an_owner_sees_their_own_team_and_the_operator_every_team(client, owner, outsider, superuser):
    """Issue 21, 7: a shop runs its team itself (tests/dashboard/test_team.py)."""
    client.force_login(owner)
    page = client.get("/admin/merchants/merchantmembership/")
    assert page.status_code == 200
    assert [m.user for m in page.context["cl"].result_list] == [owner]
    client.force_login(superuser)
    page = client.get("/admin/merchants/merchantmembership/")
    assert {m.user for m in page.context["cl"].result_list} == {owner, outsider}


def test_a_staff_user_without_a_merchant_sees_nothing(client, db):
    from django.contrib.auth.models import User

    lonely = User.objects.create_user("lonely", is_staff=True)
    client.force_login(lonely)
    response = client.get("/admin/")
    assert response.status_code == 200
    assert b"/admin/merchants/" not in response.content
    assert client.get(LIST).status_code == 403


def test_a_merchant_added_by_the_operator_requires_its_key(client, superuser):
    client.force_login(superuser)
    form = client.get("/admin/merchants/merchant/add/").context["adminform"].form
    assert form["require_api_key"].initial is True


def test_an_owner_switches_the_key_requirement_off(client, owner, other_merchant, merchant):
    merchant.require_api_key = True
    merchant.save()
    client.force_login(owner)
    response = client.post(_change(merchant), _form(merchant, require_api_key=""))
    assert response.status_code == 302
    merchant.refresh_from_db()
    assert merchant.require_api_key is False


def test_an_owner_records_the_legal_identity(client, owner, merchant):
    client.force_login(owner)
    identity = {
        "legal_name": "Mama Put Foods Ltd",
        "address": "12 Admiralty Way\nLekki Phase 1, Lagos",
        "phone": "+234 803 123 4589",
        "support_email": "help@mamaput.example.com",
        "tax_id_scheme": "NG_TIN",
        "tax_id": "12345678-0001",
        "registration_number": "RC1234567",
        "time_zone": "Africa/Accra",
        "return_policy": "Unopened drinks within 7 days.",
        "receipt_footer": "Thank you!",
    }
    response = client.post(_change(merchant), _form(merchant, **identity))
    assert response.status_code == 302, response.content
    merchant.refresh_from_db()
    assert {name: getattr(merchant, name) for name in identity} == identity


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("time_zone", "Lagos", "Enter a time zone name such as Africa/Lagos or Africa/Accra."),
        ("country", "Nigeria", "Ensure this value has at most 2 characters (it has 7)."),
        ("country", "XX", "Enter a two-letter country code in capitals, such as NG or GH."),
        ("tax_id_scheme", "ng tin", "Select a valid choice. ng tin is not one of the available choices."),
        ("registration_number", "1234567", "Enter a CAC registration number: RC, BN or IT followed by its digits"),
        ("registration_number", "RC12A4567", "Enter a CAC registration number: RC, BN or IT followed by its digits"),
        ("registration_number", "XY1234567", "Enter a CAC registration number: RC, BN or IT followed by its digits"),
    ],
)
def test_the_identity_is_checked(client, owner, merchant, field, value, message):
    client.force_login(owner)
    response = client.post(_change(merchant), _form(merchant, **{field: value}))
    assert response.status_code == 200
    assert message in response.content.decode()


@pytest.mark.parametrize(
    ("typed", "stored"),
    [("RC 1234567", "RC1234567"), ("rc-1234567", "RC1234567"), ("BN: 2345678", "BN2345678"), ("IT 98765", "IT98765")],
)
def test_the_registration_number_is_stored_in_one_form(client, owner, merchant, typed, stored):
    client.force_login(owner)
    response = client.post(_change(merchant), _form(merchant, registration_number=typed))
    assert response.status_code == 302, response.content
    merchant.refresh_from_db()
    assert merchant.registration_number == stored


def test_the_list_is_titled_in_plain_words(client, owner, merchant):
    client.force_login(owner)
    content = client.get("/admin/merchants/merchant/").content.decode()
    assert "<h1>Merchants</h1>" in content
    assert "Select merchant to change" not in content


def test_the_shops_page_is_titled_shop_details(client, owner, merchant):
    client.force_login(owner)
    content = client.get(_change(merchant)).content.decode()
    assert "<h1>Shop details</h1>" in content
    assert "Change merchant" not in content


def test_an_owner_sets_the_receipt_number_prefix_in_capitals(client, owner, merchant):
    client.force_login(owner)
    page = client.get(_change(merchant)).content.decode()
    assert "Receipt numbers" in page
    assert 'name="receipt_prefix"' in page
    response = client.post(_change(merchant), _form(merchant, receipt_prefix=" mp "))
    assert response.status_code == 302, response.content
    merchant.refresh_from_db()
    assert merchant.receipt_prefix == "MP"


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("M-P", "Use 1 to 10 capital letters or digits, such as MP: no spaces or dashes."),
        ("TEST", "TEST begins the numbers of test receipts: choose another prefix."),
    ],
)
def test_a_prefix_that_could_read_as_another_series_is_refused(client, owner, merchant, typed, message):
    client.force_login(owner)
    response = client.post(_change(merchant), _form(merchant, receipt_prefix=typed))
    assert response.status_code == 200
    assert message in response.content.decode()
    merchant.refresh_from_db()
    assert merchant.receipt_prefix == ""
