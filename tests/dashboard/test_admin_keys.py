"""API keys in the admin: scoped to the user's merchants, shown once, rotated, revoked."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client
from django.utils import timezone

from merchants.keys import issue_key
from merchants.models import ApiKey
from tests.helpers import admitted_key

pytestmark = pytest.mark.django_db

LIST = "/admin/merchants/apikey/"
ADD = "/admin/merchants/apikey/add/"


def _change(api_key):
    return f"/admin/merchants/apikey/{api_key.pk}/change/"


def _shown_key(response) -> str:
    return re.search(r'id="new-api-key"[^>]*>(pos(?:test|live)_[0-9A-Za-z]{50})</textarea>', response.content.decode())[
        1
    ]


class TestList:
    def test_an_owner_sees_only_their_merchants_keys(self, client, owner, live_key, other_live_key):
        client.force_login(owner)
        response = client.get(LIST)
        assert response.status_code == 200
        assert live_key.api_key.prefix.encode() in response.content
        assert other_live_key.api_key.prefix.encode() not in response.content

    def test_a_member_sees_them_too(self, client, member, live_key):
        client.force_login(member)
        response = client.get(LIST)
        assert response.status_code == 200
        assert live_key.api_key.prefix.encode() in response.content
        assert ADD.encode() not in response.content

    def test_an_outsider_sees_none_of_them(self, client, outsider, live_key, other_live_key):
        client.force_login(outsider)
        response = client.get(LIST)
        assert live_key.api_key.prefix.encode() not in response.content
        assert other_live_key.api_key.prefix.encode() in response.content

    def test_a_superuser_sees_all(self, client, superuser, live_key, other_live_key):
        client.force_login(superuser)
        response = client.get(LIST)
        assert live_key.api_key.prefix.encode() in response.content
        assert other_live_key.api_key.prefix.encode() in response.content

    def test_it_shows_type_name_prefix_dates_and_state(self, client, owner, live_key):
        client.force_login(owner)
        content = client.get(LIST).content.decode()
        for text in ["Till 1", "Live", live_key.api_key.prefix, "Active", "Last used", "Expires", "Never"]:
            assert text in content, text

    def test_it_reads_as_the_product(self, client, owner, live_key):
        client.force_login(owner)
        content = client.get(LIST).content.decode()
        assert "<title>API keys | Receco dashboard</title>" in content
        assert "<h1>API keys</h1>" in content
        assert 'class="addlink">Create a key</a>' in content
        assert "Select API key to change" not in content
        assert "Django" not in content

    def test_times_are_in_the_merchants_zone_and_named(self, client, owner, live_key, merchant):
        ApiKey.objects.filter(pk=live_key.api_key.pk).update(last_used_at=datetime(2026, 11, 25, 13, 5, tzinfo=UTC))
        client.force_login(owner)
        assert "25 Nov 2026, 14:05 WAT" in client.get(LIST).content.decode()
        merchant.time_zone = "Asia/Tokyo"
        merchant.save()
        assert "25 Nov 2026, 22:05 JST" in client.get(LIST).content.decode()

    def test_keys_older_than_90_days_are_marked_and_filtered(self, client, owner, merchant, live_key):
        old = issue_key(merchant, "live", "Old till").api_key
        ApiKey.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=91))
        client.force_login(owner)
        assert b"rotation due" in client.get(LIST).content
        due = client.get(LIST, {"rotation": "due"}).content.decode()
        assert old.prefix in due
        assert live_key.api_key.prefix not in due

    def test_it_filters_by_state(self, client, owner, merchant, live_key):
        revoked = issue_key(merchant, "live", "Gone").api_key
        revoked.revoked_at = timezone.now()
        revoked.save()
        client.force_login(owner)
        content = client.get(LIST, {"state": "revoked"}).content.decode()
        assert revoked.prefix in content
        assert live_key.api_key.prefix not in content

    def test_a_pasted_prefix_finds_its_key(self, client, owner, merchant, live_key):
        other = issue_key(merchant, "live", "Other")
        client.force_login(owner)
        content = client.get(LIST, {"q": live_key.api_key.prefix}).content.decode()
        assert live_key.api_key.prefix in content
        assert other.api_key.prefix not in content


class TestCreation:
    def test_an_owner_makes_a_key_and_sees_it_once(self, client, owner, merchant):
        client.force_login(owner)
        made = client.post(ADD, {"merchant": merchant.pk, "type": "live", "name": "Till 2"})
        api_key = ApiKey.objects.get()
        assert made.status_code == 302  # post, redirect, get
        assert made["Location"] == f"/admin/merchants/apikey/{api_key.pk}/shown/"
        response = client.get(made["Location"])
        assert response.status_code == 200
        assert b"will not be shown again" in response.content
        assert "no-store" in response["Cache-Control"]
        key = _shown_key(response)
        assert (api_key.merchant, api_key.type, api_key.name) == (merchant, "live", "Till 2")
        assert admitted_key(key) == api_key
        # The key's own page shows its prefix, never the key.
        page = client.get(_change(api_key)).content.decode()
        assert api_key.prefix in page
        assert key not in page

    def test_reloading_the_page_that_shows_the_key_shows_none_and_makes_none(self, client, owner, merchant):
        client.force_login(owner)
        made = client.post(ADD, {"merchant": merchant.pk, "type": "live", "name": "Till 2"})
        key = _shown_key(client.get(made["Location"]))

        reload = client.get(made["Location"])

        api_key = ApiKey.objects.get()  # one key
        assert reload.status_code == 302
        assert reload["Location"] == _change(api_key)
        page = client.get(reload["Location"]).content.decode()
        assert "A key is shown once, on the page that made it: this one cannot be shown again." in page
        assert key not in page

    def test_the_session_never_holds_the_key_and_another_browser_cannot_read_it(self, client, owner, merchant):
        client.force_login(owner)
        made = client.post(ADD, {"merchant": merchant.pk, "type": "live", "name": "Till 2"})
        kept = str(client.session.load())
        other = Client()
        other.force_login(owner)  # the same user, signed in elsewhere: no pad

        elsewhere = other.get(made["Location"])
        key = _shown_key(client.get(made["Location"]))

        assert key not in kept
        assert key[20:52] not in kept  # nor its secret
        assert elsewhere.status_code == 302
        assert admitted_key(key) == ApiKey.objects.get()

    def test_the_pad_is_a_short_lived_cookie_of_the_key_pages_only(self, client, owner, merchant):
        client.force_login(owner)
        made = client.post(ADD, {"merchant": merchant.pk, "type": "live", "name": "Till 2"})
        pad = made.cookies["receco_key_pad"]
        assert (pad["path"], pad["max-age"], pad["httponly"], pad["samesite"]) == (
            "/admin/merchants/apikey/",
            300,
            True,
            "Strict",
        )

        shown = client.get(made["Location"])

        assert shown.cookies["receco_key_pad"]["max-age"] == 0  # gone with the page that showed it

    def test_the_page_that_shows_a_key_is_scoped(self, client, outsider, live_key):
        client.force_login(outsider)
        assert client.get(f"/admin/merchants/apikey/{live_key.api_key.pk}/shown/").status_code == 404

    def test_the_form_says_what_its_button_does(self, client, owner):
        client.force_login(owner)
        page = client.get(ADD).content.decode()
        assert '<input type="submit" value="Create the key" class="default" name="_save">' in page

    def test_the_merchant_is_offered_only_among_the_owners_own(self, client, owner, merchant, other_merchant):
        client.force_login(owner)
        content = client.get(ADD).content.decode()
        assert f'value="{merchant.pk}"' in content
        assert f'value="{other_merchant.pk}"' not in content

    def test_an_owner_cannot_make_a_key_for_another_merchant(self, client, owner, other_merchant):
        client.force_login(owner)
        response = client.post(ADD, {"merchant": other_merchant.pk, "type": "live", "name": "Sneaky"})
        assert response.status_code == 200
        assert b"Select a valid choice" in response.content
        assert not ApiKey.objects.exists()

    def test_a_member_cannot_make_keys(self, client, member, merchant):
        client.force_login(member)
        assert client.get(ADD).status_code == 403
        assert client.post(ADD, {"merchant": merchant.pk, "type": "live"}).status_code == 403
        assert not ApiKey.objects.exists()

    def test_the_form_keeps_csrf(self, owner, merchant):
        client = Client(enforce_csrf_checks=True)
        client.force_login(owner)
        response = client.post(ADD, {"merchant": merchant.pk, "type": "live", "name": "No token"})
        assert response.status_code == 403
        assert not ApiKey.objects.exists()

    def test_the_log_names_the_key_by_its_prefix_only(self, client, owner, merchant):
        client.force_login(owner)
        key = _shown_key(client.post(ADD, {"merchant": merchant.pk, "type": "test", "name": "Laptop"}, follow=True))
        entry = LogEntry.objects.get()
        assert entry.object_repr == f"Laptop ({key[:20]}…)"
        assert key[20:] not in entry.change_message


class TestChange:
    def test_an_owner_renames_a_key(self, client, owner, live_key):
        client.force_login(owner)
        response = client.post(_change(live_key.api_key), {"name": "Front till"})
        assert response.status_code == 302
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.name == "Front till"

    def test_a_member_cannot_rename_it(self, client, member, live_key):
        client.force_login(member)
        assert client.get(_change(live_key.api_key)).status_code == 200
        assert client.post(_change(live_key.api_key), {"name": "Mine"}).status_code == 403

    def test_an_outsider_cannot_open_it(self, client, outsider, live_key):
        client.force_login(outsider)
        response = client.get(_change(live_key.api_key))
        assert response.status_code == 404
        assert "No such API key" in response.content.decode()

    def test_nobody_deletes_keys(self, client, superuser, live_key):
        client.force_login(superuser)
        assert client.get(f"/admin/merchants/apikey/{live_key.api_key.pk}/delete/").status_code == 403


class TestRotation:
    def _url(self, api_key):
        return f"/admin/merchants/apikey/{api_key.pk}/rotate/"

    def test_it_asks_first(self, client, owner, live_key):
        client.force_login(owner)
        response = client.get(self._url(live_key.api_key))
        assert response.status_code == 200
        assert b"The old key keeps working for" in response.content
        assert ApiKey.objects.count() == 1

    def test_the_new_key_is_shown_once_and_the_old_one_expires_after_the_grace(self, client, owner, live_key):
        client.force_login(owner)
        before = timezone.now()
        response = client.post(self._url(live_key.api_key), {"grace": "86400"}, follow=True)
        assert response.redirect_chain == [(f"/admin/merchants/apikey/{live_key.api_key.pk + 1}/shown/", 302)]
        new_key = _shown_key(response)
        old = ApiKey.objects.get(pk=live_key.api_key.pk)
        assert admitted_key(new_key) == old.rotated_to
        assert before + timedelta(hours=24) <= old.expires_at <= timezone.now() + timedelta(hours=24)
        assert admitted_key(live_key.key) == old  # still inside the grace period
        assert b"keeps working until" in response.content

    def test_a_member_cannot_rotate(self, client, member, live_key):
        client.force_login(member)
        assert client.get(self._url(live_key.api_key)).status_code == 403
        assert client.post(self._url(live_key.api_key), {"grace": "0"}).status_code == 403
        assert ApiKey.objects.count() == 1

    def test_an_outsider_cannot_rotate(self, client, outsider, live_key):
        client.force_login(outsider)
        assert client.post(self._url(live_key.api_key), {"grace": "0"}).status_code == 404
        assert ApiKey.objects.count() == 1

    def test_a_rotated_key_cannot_be_rotated_again(self, client, owner, live_key):
        client.force_login(owner)
        client.post(self._url(live_key.api_key), {"grace": "3600"})
        response = client.post(self._url(live_key.api_key), {"grace": "3600"}, follow=True)
        assert b"only active keys can be rotated" in response.content
        assert ApiKey.objects.count() == 2


class TestRevocation:
    def _url(self, api_key):
        return f"/admin/merchants/apikey/{api_key.pk}/revoke/"

    def test_it_asks_first(self, client, owner, live_key):
        client.force_login(owner)
        response = client.get(self._url(live_key.api_key))
        assert response.status_code == 200
        assert b"cannot be undone" in response.content
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.revoked_at is None

    def test_it_revokes_at_once(self, client, owner, live_key):
        client.force_login(owner)
        response = client.post(self._url(live_key.api_key))
        assert response.status_code == 302
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.state() == ApiKey.State.REVOKED
        assert LogEntry.objects.get().change_message == "Revoked"

    def test_a_member_cannot_revoke(self, client, member, live_key):
        client.force_login(member)
        assert client.post(self._url(live_key.api_key)).status_code == 403
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.revoked_at is None

    def test_an_outsider_cannot_revoke(self, client, outsider, live_key):
        client.force_login(outsider)
        assert client.post(self._url(live_key.api_key)).status_code == 404
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.revoked_at is None

    def test_it_keeps_csrf(self, owner, live_key):
        client = Client(enforce_csrf_checks=True)
        client.force_login(owner)
        assert client.post(self._url(live_key.api_key)).status_code == 403
        live_key.api_key.refresh_from_db()
        assert live_key.api_key.revoked_at is None

    def test_the_key_page_offers_rotate_and_revoke_to_owners_only(self, client, owner, member, live_key):
        client.force_login(owner)
        page = client.get(_change(live_key.api_key)).content.decode()
        assert self._url(live_key.api_key) in page
        assert f"/admin/merchants/apikey/{live_key.api_key.pk}/rotate/" in page
        client.force_login(member)
        page = client.get(_change(live_key.api_key)).content.decode()
        assert self._url(live_key.api_key) not in page
