"""No dashboard URL lets a user read or act on another merchant's records (issue 21, "Done
when"): every model the dashboard registers, walked by an owner of merchant A over merchant
B's rows, by list, filter, page, change, delete and history URL and each action page."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from dashboard.scoping import MerchantScopedAdmin
from einvoicing.models import EInvoicing

pytestmark = pytest.mark.django_db


@pytest.fixture
def theirs(other_merchant, other_live_key, sale, settings, client, outsider, django_capture_on_commit_callbacks):
    """Merchant B with a row of every kind: a key, a receipt with a delivery, a webhook
    endpoint with a failed delivery and its attempt, e-invoicing settings, and audit trail
    entries."""
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale
    from receipts.writer import update_contact as attach_contact
    from webhooks.endpoints import create_endpoint

    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    create_endpoint(other_merchant, "https://127.0.0.1:9/theirs", description="Their accounts")
    setup = EInvoicing(merchant=other_merchant, business_id="their-business", service_id="THEIRS01", city="Lagos")
    setup.set_credentials(api_key="their-key", api_secret="their-secret", crypto_keys="their crypto keys")
    setup.save()  # off: their sale is not reported, but their settings are there to walk
    body = {**sale, "merchant_string_id": other_merchant.string_id, "token": "rcpt_theirs01_aaaaaa", "short_code": None}
    with django_capture_on_commit_callbacks(execute=True):
        receipt = create_receipt(other_merchant, validate_sale(body), keyed=True).receipt
        attach_contact(receipt, "their.customer@example.com", None)
    client.force_login(outsider)
    client.post("/admin/merchants/apikey/add/", {"merchant": other_merchant.pk, "type": "test", "name": "Their till"})
    client.post(
        "/admin/merchants/invitation/add/",
        {"merchant": other_merchant.pk, "email": "new@corner.example", "role": "member"},
    )
    client.logout()
    return other_merchant


def _scoped_admins():
    return [
        (model, admin.site.get_model_admin(model))
        for model in apps.get_models()
        if admin.site.is_registered(model) and isinstance(admin.site.get_model_admin(model), MerchantScopedAdmin)
    ]


def _their_rows(model, model_admin, merchant):
    path = "pk" if model_admin.merchant_path == "pk" else model_admin.merchant_path
    return list(model._default_manager.filter(**{path: merchant.pk}))


def test_every_merchant_model_has_rows_of_theirs_to_walk(theirs):
    missing = [
        model._meta.label for model, model_admin in _scoped_admins() if not _their_rows(model, model_admin, theirs)
    ]
    assert missing == []


def test_an_owner_reads_and_changes_nothing_of_another_merchant(client, owner, merchant, theirs):
    client.force_login(owner)
    walked = 0
    for model, model_admin in _scoped_admins():
        info = (model._meta.app_label, model._meta.model_name)
        changelist = reverse("admin:{}_{}_changelist".format(*info))
        for query in ({}, {"merchant": theirs.pk}, {"q": theirs.string_id}):
            response = client.get(changelist, query)
            if response.status_code == 302:  # a filter the page does not offer: the list without it
                assert response["Location"] == f"{changelist}?e=1", (changelist, query)
                continue
            assert response.status_code == 200, (changelist, query)
            shown = list(response.context["cl"].result_list)
            assert all(model_admin.merchant_id_of(row) == merchant.pk for row in shown), (changelist, query)
        for row in _their_rows(model, model_admin, theirs):
            before = model._default_manager.filter(pk=row.pk).values().get()
            for name in ("change", "delete", "history"):
                url = reverse(f"admin:%s_%s_{name}" % info, args=[row.pk])
                for method in ("get", "post"):
                    response = getattr(client, method)(url, {"post": "yes", "name": "Taken over"})
                    # Refused, or not found as a row that does not exist: the page says nothing of it.
                    assert response.status_code in (403, 404), (method, url, response.status_code)
                    assert str(row) not in response.content.decode(), (method, url)
                    walked += 1
            assert model._default_manager.filter(pk=row.pk).values().get() == before, model._meta.label
    # The action pages of keys, endpoints, merchants and sales.
    key = theirs.api_keys.first()
    endpoint = theirs.webhook_endpoints.first()
    sale = theirs.receipts.get()
    for url in [
        f"/admin/merchants/apikey/{key.pk}/rotate/",
        f"/admin/merchants/apikey/{key.pk}/revoke/",
        f"/admin/webhooks/endpoint/{endpoint.pk}/roll/",
        f"/admin/merchants/merchant/{theirs.pk}/usage/",
        f"/admin/receipts/receipt/{sale.pk}/refund/",
        f"/admin/receipts/receipt/{sale.pk}/void/",
    ]:
        form = {"grace": "0", "what": "all", "reason": "Taken over", "refund_token": "taken_over_01", "confirm": "1"}
        for method in ("get", "post"):
            assert getattr(client, method)(url, form).status_code == 404, (method, url)
    key.refresh_from_db()
    assert key.revoked_at is None
    assert key.rotated_to is None
    sale.refresh_from_db()
    assert sale.status == "completed"
    assert not sale.refunds.exists()
    assert walked > 50


@pytest.mark.parametrize(
    "model",
    [
        "auth.user",
        "auth.group",
        "otp_totp.totpdevice",
        "otp_static.staticdevice",
        "axes.accessattempt",
        "django_tasks_database.dbtaskresult",
    ],
)
def test_the_operators_own_pages_are_closed_to_owners(client, owner, model):
    client.force_login(owner)
    app_label, model_name = model.split(".")
    assert client.get(reverse(f"admin:{app_label}_{model_name}_changelist")).status_code == 403


def test_a_member_acts_on_nothing_of_their_own_merchant(client, member, merchant, live_key, receipt):
    from webhooks.endpoints import create_endpoint

    endpoint = create_endpoint(merchant, "https://hooks.mama-put.example/receco")
    key = live_key.api_key
    client.force_login(member)
    refund = {"what": "all", "reason": "Mine", "refund_token": "members_refund_01", "confirm": "1"}
    for url, data in [
        (f"/admin/receipts/receipt/{receipt.pk}/refund/", refund),
        (f"/admin/receipts/receipt/{receipt.pk}/void/", {"reason": "Mine"}),
        (f"/admin/merchants/apikey/{key.pk}/rotate/", {"grace": "0"}),
        (f"/admin/merchants/apikey/{key.pk}/revoke/", {}),
        (f"/admin/merchants/apikey/{key.pk}/change/", {"name": "Mine"}),
        ("/admin/merchants/apikey/add/", {"merchant": merchant.pk, "type": "live", "name": "Mine"}),
        (f"/admin/webhooks/endpoint/{endpoint.pk}/roll/", {"grace": "0"}),
        (f"/admin/webhooks/endpoint/{endpoint.pk}/change/", {"url": "https://evil.example/"}),
        (f"/admin/merchants/merchant/{merchant.pk}/change/", {"name": "Mine"}),
    ]:
        assert client.post(url, data).status_code == 403, url
    key.refresh_from_db()
    endpoint.refresh_from_db()
    merchant.refresh_from_db()
    assert (key.revoked_at, key.rotated_to, key.name) == (None, None, "Till 1")
    assert endpoint.url == "https://hooks.mama-put.example/receco"
    assert merchant.name == "Mama Put Kitchen"
    receipt.refresh_from_db()
    assert receipt.status == "completed"
