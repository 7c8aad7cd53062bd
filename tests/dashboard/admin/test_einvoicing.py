"""E-invoicing in the dashboard: an owner sets it up for their own shop; the credentials are
sealed, never shown again and written in the audit trail only as changed; nobody else
sees or changes it; switching it on needs what an invoice states."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from einvoicing import vault
from einvoicing.models import EInvoicing
from merchants.models import AuditEntry

pytestmark = pytest.mark.django_db

SETTINGS = "/admin/einvoicing/einvoicing/"
IP = "203.0.113.7"


def _form(shop, taxpayer, keys_file, **overrides) -> dict:
    form = {
        "merchant": shop.pk,
        "enabled": "on",
        "business_id": taxpayer.business_id,
        "service_id": "94nd90nr",
        "city": "Lagos",
        "postal_zone": "106104",
        "api_key": taxpayer.api_key,
        "api_secret": taxpayer.api_secret,
        "crypto_keys": SimpleUploadedFile("crypto_keys.txt", keys_file.encode(), "text/plain"),
    }
    return {name: value for name, value in {**form, **overrides}.items() if value is not None}


@pytest.fixture
def online(settings):
    settings.RECECO_EINVOICING_URL = "https://einvoice.nrs.example"


def test_an_owner_sets_it_up_and_the_credentials_are_sealed_and_never_shown_again(
    client, owner, identified, taxpayer, crypto_keys, online
):
    client.force_login(owner)
    response = client.post(SETTINGS + "add/", _form(identified, taxpayer, crypto_keys), REMOTE_ADDR=IP)
    assert response.status_code == 302
    setup = EInvoicing.objects.get()
    assert (setup.merchant, setup.enabled, setup.service_id) == (identified, True, "94ND90NR")
    credentials = setup.credentials()
    assert (credentials.api_key, credentials.api_secret, credentials.crypto_keys) == (
        taxpayer.api_key,
        taxpayer.api_secret,
        crypto_keys,
    )
    for sealed in (setup.sealed_api_key, setup.sealed_api_secret, setup.sealed_crypto_keys):
        assert taxpayer.api_secret not in sealed
        assert taxpayer.api_key not in sealed
    page = client.get(f"{SETTINGS}{setup.pk}/change/").content.decode()
    assert "API key, API secret, crypto keys file" in page  # which are saved, nothing of them
    for secret in (taxpayer.api_key, taxpayer.api_secret, setup.sealed_api_secret, "BEGIN PUBLIC KEY"):
        assert secret not in page
    assert taxpayer.api_secret not in client.get(SETTINGS).content.decode()


def test_a_blank_credential_keeps_the_one_saved_and_a_new_one_replaces_it(
    client, owner, reporting, taxpayer, crypto_keys, online
):
    client.force_login(owner)
    form = _form(reporting.merchant, taxpayer, crypto_keys, merchant=None, api_key="", crypto_keys="")
    form["api_secret"] = "a-new-secret"
    assert client.post(f"{SETTINGS}{reporting.pk}/change/", form).status_code == 302
    credentials = EInvoicing.objects.get().credentials()
    assert (credentials.api_key, credentials.api_secret, credentials.crypto_keys) == (
        taxpayer.api_key,
        "a-new-secret",
        crypto_keys,
    )


def test_the_audit_trail_says_a_credential_changed_and_nothing_of_it(
    client, owner, reporting, taxpayer, crypto_keys, online
):
    AuditEntry.objects.all().delete()
    client.force_login(owner)
    form = _form(reporting.merchant, taxpayer, crypto_keys, merchant=None, api_key="", crypto_keys="")
    form["api_secret"], form["service_id"] = "a-new-secret", "AB12CD34"
    client.post(f"{SETTINGS}{reporting.pk}/change/", form, REMOTE_ADDR=IP)
    (entry,) = AuditEntry.objects.filter(merchant=reporting.merchant)
    assert (entry.actor, entry.remote_addr, entry.action) == (owner, IP, AuditEntry.Action.UPDATE)
    assert entry.changes_dict["service_id"] == ["94ND90NR", "AB12CD34"]
    assert entry.changes_dict["sealed_api_secret"] == ["(secret)", "(secret)"]
    assert "sealed_api_key" not in entry.changes_dict  # kept: not changed
    assert "a-new-secret" not in str(entry.changes) + str(entry.changes_text)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"service_id": "94ND90"}, "Eight letters and digits, as NRS gave them to your business (e.g. 94ND90NR)."),
        ({"api_secret": ""}, "Required: the service cannot report without it"),
        (
            {"crypto_keys": SimpleUploadedFile("crypto_keys.txt", b"hello")},
            "Not an NRS crypto_keys.txt: it must hold a public key (-----BEGIN PUBLIC KEY-----) and the certificate",
        ),
    ],
)
def test_what_cannot_report_is_refused_saying_why(
    client, owner, identified, taxpayer, crypto_keys, online, overrides, message
):
    client.force_login(owner)
    response = client.post(SETTINGS + "add/", _form(identified, taxpayer, crypto_keys, **overrides))
    assert response.status_code == 200
    assert message.replace("'", "&#x27;") in response.content.decode()
    assert not EInvoicing.objects.exists()


def test_switching_on_needs_the_shops_legal_identity_and_the_operators_url(
    client, owner, merchant, taxpayer, crypto_keys, settings
):
    client.force_login(owner)
    response = client.post(SETTINGS + "add/", _form(merchant, taxpayer, crypto_keys))
    assert "Before reporting, fill in its tax identifier (TIN), its support email, its address in Shop details" in (
        response.content.decode()
    )
    merchant.tax_id, merchant.support_email, merchant.address = "29445920-4211", "a@b.example", "1 Marina"
    merchant.save()
    settings.RECECO_EINVOICING_URL = ""
    response = client.post(SETTINGS + "add/", _form(merchant, taxpayer, crypto_keys))
    assert "The service&#x27;s operator has not set RECECO_EINVOICING_URL" in response.content.decode()
    # Off, it may be set up all the same, ready for the day the operator sets it.
    assert client.post(SETTINGS + "add/", _form(merchant, taxpayer, crypto_keys, enabled=None)).status_code == 302


def test_without_the_operators_key_nothing_can_be_saved(client, owner, identified, taxpayer, crypto_keys, settings):
    settings.RECECO_EINVOICING_KEYS = []
    client.force_login(owner)
    response = client.post(SETTINGS + "add/", _form(identified, taxpayer, crypto_keys, enabled=None))
    assert vault.NO_KEYS in response.content.decode()
    assert not EInvoicing.objects.exists()


def test_members_see_nothing_of_it(client, member, reporting):
    client.force_login(member)
    assert client.get(SETTINGS).status_code == 403
    assert client.get(f"{SETTINGS}{reporting.pk}/change/").status_code == 403
    assert client.get(SETTINGS + "add/").status_code == 403


def test_another_shops_owner_can_neither_see_nor_set_it(client, outsider, reporting, merchant, taxpayer, crypto_keys):
    client.force_login(outsider)
    assert client.get(f"{SETTINGS}{reporting.pk}/change/").status_code == 404
    assert reporting.merchant.name not in client.get(SETTINGS).content.decode()
    response = client.post(SETTINGS + "add/", _form(merchant, taxpayer, crypto_keys, enabled=None))
    assert "Select a valid choice" in response.content.decode()


def test_nobody_but_the_operator_deletes_it(client, owner, reporting):
    client.force_login(owner)
    assert client.post(f"{SETTINGS}{reporting.pk}/delete/", {"post": "yes"}).status_code == 403
    assert EInvoicing.objects.exists()


def test_a_file_too_large_is_not_read(client, owner, identified, taxpayer, crypto_keys):
    client.force_login(owner)
    big = SimpleUploadedFile("crypto_keys.txt", io.BytesIO(b"x" * 70_000).getvalue())
    response = client.post(SETTINGS + "add/", _form(identified, taxpayer, crypto_keys, enabled=None, crypto_keys=big))
    assert "This is not a crypto_keys.txt: it is far too large" in response.content.decode()
