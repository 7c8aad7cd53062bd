"""The audit trail (merchants.audit, dashboard.admin.audit): issue 21's "nothing records
who did what" replayed for every action that moves money or access, and the trail's
isolation between merchants."""

import re

import pytest

from merchants.keys import issue_key, rotate_key
from merchants.models import ApiKey, AuditEntry, MerchantMembership
from webhooks.endpoints import create_endpoint

pytestmark = pytest.mark.django_db

TRAIL = "/admin/merchants/auditentry/"
IP = "203.0.113.7"


@pytest.fixture
def fresh():
    """Forget what the fixtures did (made merchants, keys and members): call first."""
    return lambda: AuditEntry.objects.all().delete()


def _entries(merchant):
    return list(AuditEntry.objects.filter(merchant=merchant).order_by("pk"))


def _only(merchant) -> AuditEntry:
    (entry,) = _entries(merchant)
    return entry


def test_a_key_made_rotated_and_revoked_in_the_dashboard_is_recorded(client, owner, merchant, fresh):
    fresh()
    client.force_login(owner)
    client.post(
        "/admin/merchants/apikey/add/", {"merchant": merchant.pk, "type": "live", "name": "Till 2"}, REMOTE_ADDR=IP
    )
    made = _only(merchant)
    key = ApiKey.objects.get(merchant=merchant)
    assert (made.actor, made.remote_addr, made.action, made.object_pk) == (
        owner,
        IP,
        AuditEntry.Action.CREATE,
        str(key.pk),
    )
    assert made.changes_dict["name"] == ["None", "Till 2"]
    assert "digest" not in made.changes_dict
    assert "token_secret" not in made.changes_dict

    client.post(f"/admin/merchants/apikey/{key.pk}/rotate/", {"grace": "3600"}, REMOTE_ADDR=IP)
    new_key = ApiKey.objects.exclude(pk=key.pk).get()
    entries = _entries(merchant)[1:]
    assert [(e.object_pk, e.action) for e in entries] == [
        (str(new_key.pk), AuditEntry.Action.CREATE),
        (str(key.pk), AuditEntry.Action.UPDATE),
    ]
    assert set(entries[1].changes_dict) == {"expires_at", "rotated_to"}
    assert {e.actor for e in entries} == {owner}

    AuditEntry.objects.all().delete()
    client.post(f"/admin/merchants/apikey/{new_key.pk}/revoke/", REMOTE_ADDR=IP)
    revoked = _only(merchant)
    assert (revoked.actor, revoked.object_pk, list(revoked.changes_dict)) == (owner, str(new_key.pk), ["revoked_at"])


def test_a_change_of_the_shops_identity_is_recorded_with_what_changed(client, owner, merchant, fresh):
    fresh()
    client.force_login(owner)
    page = client.get(f"/admin/merchants/merchant/{merchant.pk}/change/")
    form = {k: v for k, v in page.context["adminform"].form.initial.items() if v is not None}
    form.update(name="Mama Put Kitchen & Bar", legal_name="Mama Put Foods Ltd", tax_id_scheme="NG_TIN", tax_id="1234")
    response = client.post(f"/admin/merchants/merchant/{merchant.pk}/change/", form, REMOTE_ADDR=IP)
    assert response.status_code == 302
    entry = _only(merchant)
    assert entry.actor == owner
    assert entry.remote_addr == IP
    assert entry.changes_dict["name"] == ["Mama Put Kitchen", "Mama Put Kitchen & Bar"]
    assert entry.changes_dict["tax_id"] == ["", "1234"]


def test_the_trail_says_what_was_done_in_words(client, owner, merchant, fresh):
    fresh()
    client.force_login(owner)
    page = client.get(f"/admin/merchants/merchant/{merchant.pk}/change/")
    form = {k: v for k, v in page.context["adminform"].form.initial.items() if v is not None}
    form.update(require_api_key="on", tax_id_scheme="NG_TIN", tax_id="12345678-0001")
    assert client.post(f"/admin/merchants/merchant/{merchant.pk}/change/", form).status_code == 302
    trail = client.get(TRAIL)
    html = trail.content.decode()
    assert "<li>require API key: No → Yes</li>" in html
    assert "<li>tax ID type: Nigerian Tax ID (TIN)</li>" in html
    assert "<li>tax ID: 12345678-0001</li>" in html
    (filtered,) = [spec for spec in trail.context["cl"].filter_specs if spec.title == "what was done"]
    offered = [choice["display"] for choice in filtered.choices(trail.context["cl"])]
    assert offered == ["All", "Made", "Changed", "Removed"]
    assert "Shop changed" in client.get(TRAIL, {"action": "1"}).content.decode()
    assert "Shop changed" not in client.get(TRAIL, {"action": "0"}).content.decode()


def test_a_webhook_endpoint_made_changed_and_rolled_never_shows_its_secret(client, owner, merchant, fresh):
    fresh()
    client.force_login(owner)
    endpoint = create_endpoint(merchant, "https://hooks.mama-put.example/receco")
    old_secret = endpoint.secret
    client.post(f"/admin/webhooks/endpoint/{endpoint.pk}/roll/", {"grace": "3600"}, REMOTE_ADDR=IP)
    endpoint.refresh_from_db()
    made, rolled = _entries(merchant)
    assert made.action == AuditEntry.Action.CREATE
    assert made.actor is None  # made outside any request: no one to name
    assert (rolled.actor, rolled.remote_addr, rolled.action) == (owner, IP, AuditEntry.Action.UPDATE)
    assert rolled.changes_dict["secret"] == ["(secret)", "(secret)"]
    stored = str(made.changes) + str(rolled.changes) + str(made.changes_text) + str(rolled.changes_text)
    assert old_secret not in stored
    assert endpoint.secret not in stored


def test_members_added_given_a_role_and_removed_are_recorded(client, superuser, merchant, owner, member, fresh):
    fresh()
    client.force_login(superuser)
    membership = MerchantMembership.objects.get(user=member)
    page = client.get(f"/admin/merchants/merchantmembership/{membership.pk}/change/")
    assert page.status_code == 200
    response = client.post(
        f"/admin/merchants/merchantmembership/{membership.pk}/change/",
        {"user": member.pk, "merchant": merchant.pk, "role": "owner"},
        REMOTE_ADDR=IP,
    )
    assert response.status_code == 302
    client.post(f"/admin/merchants/merchantmembership/{membership.pk}/delete/", {"post": "yes"}, REMOTE_ADDR=IP)
    changed, removed = _entries(merchant)
    assert (changed.actor, changed.changes_dict["role"]) == (superuser, ["member", "owner"])
    assert (removed.actor, removed.action, removed.remote_addr) == (superuser, AuditEntry.Action.DELETE, IP)


def test_refunds_and_voids_through_the_api_name_the_key_and_sales_are_not_recorded(
    api, merchant, stored, receipt_factory, live_key, fresh
):
    fresh()
    assert _entries(merchant) == []  # the sales
    headers = {"Authorization": f"Bearer {live_key.key}"}
    status, _ = api.post("refundReceipt", {"token": stored.token, "amount": 30000, "reason": "Cold food"}, **headers)
    assert status == 200
    voided = receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01")
    status, _ = api.post("voidReceipt", {"token": voided.token, "reason": "Rung up twice"}, **headers)
    assert status == 200
    refund, void = _entries(merchant)
    actor = f"API key {live_key.api_key.prefix}"
    assert (refund.actor, refund.additional_data, refund.content_type.model) == (None, {"actor": actor}, "receipt")
    assert refund.changes_dict["amount"] == ["", "₦300.00"]
    assert refund.changes_dict["refund of sale"] == ["", stored.short_code]
    assert refund.object_repr == f"{stored.refunds.get().short_code} of sale {stored.short_code}"
    assert (void.additional_data, void.content_type.model) == ({"actor": actor}, "void")
    assert void.changes_dict["reason"] == ["", "Rung up twice"]
    assert (void.object_repr, void.changes_dict["sale"]) == ("sale VOID01", ["", "VOID01"])


def test_a_void_and_a_refund_are_headed_as_what_was_done_to_the_sale(
    client, owner, merchant, stored, receipt_factory, fresh
):
    from receipts.refunds import refund, validate_refund, void

    fresh()
    made = refund(stored, validate_refund({"token": stored.token, "amount": 30000}), keyed=True).receipt
    void(receipt_factory(token="rcpt_voided01_aaaaaa", short_code="QXD6NT"), "Rung up twice", keyed=True)
    refunded, voided = _entries(merchant)
    client.force_login(owner)

    trail = client.get(TRAIL).content.decode()
    page = client.get(f"{TRAIL}{voided.pk}/change/").content.decode()

    assert '<td class="field-what">Voided sale QXD6NT</td>' in trail
    assert (
        f'<td class="field-what">Refunded ₦300.00 of sale {stored.short_code}: refund {made.short_code}</td>' in trail
    )
    assert "<h2>Voided sale QXD6NT</h2>" in page
    assert "&rsaquo; Voided sale QXD6NT\n</div>" in page  # the breadcrumbs
    assert "<title>Voided sale QXD6NT | " in page
    assert "Created" not in page


def test_a_key_remembered_for_one_request_is_never_taken_for_another():
    from merchants import api_actor
    from receco.ops import requestid

    with requestid.restored("request-a"):
        api_actor.key_used("poslive_AAAAAAAAAAAA")
        assert api_actor.current() == "API key poslive_AAAAAAAAAAAA"
    with requestid.restored("request-b"):
        assert api_actor.current() is None
    assert api_actor.current() is None


def test_the_address_is_the_clients_not_a_forwarded_for_header(client, owner, merchant, fresh):
    fresh()
    client.force_login(owner)
    client.post(
        "/admin/merchants/apikey/add/",
        {"merchant": merchant.pk, "type": "test", "name": "Till 2"},
        REMOTE_ADDR=IP,
        HTTP_X_FORWARDED_FOR="198.51.100.66",
    )
    assert _only(merchant).remote_addr == IP


def _trail_of_both(client, owner, outsider, merchant, other_merchant):
    client.force_login(owner)
    client.post(
        "/admin/merchants/apikey/add/", {"merchant": merchant.pk, "type": "test", "name": "Ours"}, REMOTE_ADDR=IP
    )
    client.force_login(outsider)
    client.post(
        "/admin/merchants/apikey/add/",
        {"merchant": other_merchant.pk, "type": "test", "name": "Theirs"},
        REMOTE_ADDR=IP,
    )
    return _only(merchant), _only(other_merchant)


def test_an_owner_reads_the_trail_of_their_shop_only(client, owner, outsider, merchant, other_merchant, fresh):
    fresh()
    ours, theirs = _trail_of_both(client, owner, outsider, merchant, other_merchant)
    client.force_login(owner)
    page = client.get(TRAIL)
    assert page.status_code == 200
    html = page.content.decode()
    assert "API key made: Ours" in html
    assert "Theirs" not in html
    assert client.get(f"{TRAIL}{ours.pk}/change/").status_code == 200
    # Another shop's entry by URL: as if it did not exist.
    response = client.get(f"{TRAIL}{theirs.pk}/change/")
    assert response.status_code == 404
    assert "Theirs" not in response.content.decode()
    # Nor through the merchant filter or the view-on-site shortcut.
    assert "Theirs" not in client.get(TRAIL, {"merchant": other_merchant.pk}).content.decode()
    assert client.get(f"/admin/merchants/auditentry/{theirs.pk}/history/").status_code == 404


def test_the_operator_reads_every_shops_trail(client, owner, outsider, superuser, merchant, other_merchant, fresh):
    fresh()
    _trail_of_both(client, owner, outsider, merchant, other_merchant)
    client.force_login(superuser)
    html = client.get(TRAIL).content.decode()
    assert "API key made: Ours" in html
    assert "API key made: Theirs" in html


def test_a_member_does_not_read_the_trail(client, owner, member, merchant, outsider, other_merchant, fresh):
    fresh()
    ours, _ = _trail_of_both(client, owner, outsider, merchant, other_merchant)
    client.force_login(member)
    assert client.get(TRAIL).status_code == 403
    assert client.get(f"{TRAIL}{ours.pk}/change/").status_code == 403


def test_nobody_edits_or_deletes_the_trail_from_the_dashboard(
    client, owner, outsider, superuser, merchant, other_merchant, fresh
):
    fresh()
    ours, _ = _trail_of_both(client, owner, outsider, merchant, other_merchant)
    for user in (owner, superuser):
        client.force_login(user)
        assert client.post(f"{TRAIL}{ours.pk}/change/", {"object_repr": "nothing"}).status_code == 403
        assert client.post(f"{TRAIL}{ours.pk}/delete/", {"post": "yes"}).status_code == 403
        assert client.get(f"{TRAIL}add/").status_code == 403
        response = client.post(TRAIL, {"action": "delete_selected", "_selected_action": [ours.pk], "post": "yes"})
        assert response.status_code in (200, 302)
    assert AuditEntry.objects.filter(pk=ours.pk, object_repr__contains="Ours").exists()


def test_the_trail_says_moments_in_the_shops_time_and_lists_as_items(client, owner, merchant, live_key, fresh):
    fresh()
    client.force_login(owner)
    client.post(f"/admin/merchants/apikey/{live_key.api_key.pk}/revoke/", REMOTE_ADDR=IP)
    create_endpoint(merchant, "https://hooks.mama-put.example/receco", [])
    html = client.get(TRAIL).content.decode()
    assert re.search(r"<li>revoked at: \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d WAT</li>", html)
    assert "+00:00" not in html
    rotate_key(issue_key(merchant, "test", "Till 9").api_key)
    html = client.get(TRAIL).content.decode()
    assert re.search(r"<li>expires at: \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d WAT</li>", html)
    assert re.search(r"<li>rotated to: Till 9 \(postest_\w+…\)</li>", html)
    assert "[]" not in html
