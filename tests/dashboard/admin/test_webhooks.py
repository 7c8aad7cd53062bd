"""Webhooks in the dashboard: owners add endpoints (secret shown once), roll secrets and
resend deliveries; everything is scoped to the user's merchants like API keys."""

import re

import pytest
from django.core.exceptions import ValidationError

from receipts.creation import create_receipt
from receipts.validation import validate_sale
from webhooks.endpoints import create_endpoint
from webhooks.models import Attempt, Delivery, Endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_receivers")]

ENDPOINTS = "/admin/webhooks/endpoint/"
DELIVERIES = "/admin/webhooks/delivery/"
ATTEMPTS = "/admin/webhooks/attempt/"


def _shown_secret(response) -> str:
    return re.search(r'value="(whsec_[A-Za-z0-9_-]{43})"', response.content.decode())[1]


@pytest.fixture
def theirs(other_merchant, receiver, sent, sale):
    """Another merchant's endpoint, with a delivery and its attempt."""
    endpoint = create_endpoint(other_merchant, receiver.url + "/theirs", description="Their ERP")
    sent(create_receipt, other_merchant, validate_sale({**sale, "merchant_string_id": other_merchant.string_id}))
    delivery = Delivery.objects.to_endpoint(endpoint).get()
    return endpoint, delivery, Attempt.objects.get(delivery=delivery)


class TestAdding:
    def test_an_owner_adds_an_endpoint_and_sees_its_secret_once(self, client, owner, merchant, receiver):
        client.force_login(owner)
        response = client.post(
            ENDPOINTS + "add/",
            {"merchant": merchant.pk, "url": receiver.url, "description": "Loyalty", "event_types": ["receipt.created"],
             "enabled": "on"},
        )  # fmt: skip
        assert response.status_code == 200
        assert "no-store" in response["Cache-Control"]
        endpoint = Endpoint.objects.get()
        assert (endpoint.merchant, endpoint.url, endpoint.event_types) == (merchant, receiver.url, ["receipt.created"])
        assert _shown_secret(response) == endpoint.secret
        assert endpoint.secret.encode() not in client.get(f"{ENDPOINTS}{endpoint.pk}/change/").content

    def test_an_http_url_that_is_not_localhost_is_refused(self, client, owner, merchant):
        client.force_login(owner)
        response = client.post(ENDPOINTS + "add/", {"merchant": merchant.pk, "url": "http://erp.example.com/hooks"})
        assert response.status_code == 200
        assert b"Use an https:// URL (http:// only for localhost, where this service allows it)" in response.content
        assert not Endpoint.objects.exists()

    def test_an_owner_cannot_add_one_to_another_merchant(self, client, owner, other_merchant):
        client.force_login(owner)
        response = client.post(ENDPOINTS + "add/", {"merchant": other_merchant.pk, "url": "https://x.example.com/"})
        assert response.status_code == 200
        assert b"Select a valid choice" in response.content
        assert not Endpoint.objects.exists()

    def test_a_member_cannot_add_one(self, client, member):
        client.force_login(member)
        assert client.get(ENDPOINTS + "add/").status_code == 403


class TestScoping:
    def test_lists_show_only_the_users_own(self, client, owner, endpoint, theirs, sent, merchant, sale):
        sent(create_receipt, merchant, validate_sale({**sale, "token": "rcpt_our_own_sale_1", "short_code": ""}))
        client.force_login(owner)
        endpoints = client.get(ENDPOINTS).content.decode()
        assert endpoint.url in endpoints
        assert "/theirs" not in endpoints
        deliveries = client.get(DELIVERIES).content.decode()
        assert f"{DELIVERIES}{Delivery.objects.to_endpoint(endpoint).get().pk}/change/" in deliveries
        assert f"{DELIVERIES}{theirs[1].pk}/change/" not in deliveries
        attempts = client.get(ATTEMPTS).content.decode()
        assert f"{DELIVERIES}{Delivery.objects.to_endpoint(endpoint).get().pk}/change/" in attempts
        assert f"{DELIVERIES}{theirs[1].pk}/change/" not in attempts

    @pytest.mark.parametrize(
        "page",
        [
            ENDPOINTS + "{endpoint}/change/",
            ENDPOINTS + "{endpoint}/delete/",
            ENDPOINTS + "{endpoint}/history/",
            ENDPOINTS + "{endpoint}/roll/",
            DELIVERIES + "{delivery}/change/",
            DELIVERIES + "{delivery}/delete/",
            DELIVERIES + "{delivery}/history/",
            ATTEMPTS + "{attempt}/change/",
            ATTEMPTS + "{attempt}/delete/",
            ATTEMPTS + "{attempt}/history/",
        ],
    )
    def test_another_merchants_pages_are_not_found(self, client, owner, theirs, page):
        endpoint, delivery, attempt = theirs
        client.force_login(owner)
        url = page.format(endpoint=endpoint.pk, delivery=delivery.pk, attempt=attempt.pk)
        response = client.get(url)
        assert response.status_code in (302, 403, 404)
        if response.status_code == 302:  # the admin's "does not exist" redirect, to the user's own list
            assert response["Location"] == "/admin/"
        assert endpoint.url.encode() not in response.content
        assert client.post(url, {"grace": "0", "post": "yes"}).status_code in (302, 403, 404)
        assert Endpoint.objects.filter(pk=endpoint.pk, secret=endpoint.secret).exists()
        assert Delivery.objects.filter(pk=delivery.pk).exists()

    def test_another_merchants_delivery_cannot_be_resent(self, client, owner, endpoint, theirs):
        client.force_login(owner)
        client.post(DELIVERIES, {"action": "resend_deliveries", "_selected_action": [theirs[1].pk]})
        assert Delivery.objects.to_endpoint(theirs[0]).count() == 1

    def test_a_member_sees_but_cannot_change_or_roll(self, client, member, endpoint):
        client.force_login(member)
        assert client.get(f"{ENDPOINTS}{endpoint.pk}/change/").status_code == 200
        assert client.post(f"{ENDPOINTS}{endpoint.pk}/change/", {"url": "https://x.example.com/"}).status_code == 403
        assert client.post(f"{ENDPOINTS}{endpoint.pk}/roll/", {"grace": "0"}).status_code == 403
        assert client.post(f"{ENDPOINTS}{endpoint.pk}/delete/", {"post": "yes"}).status_code == 403


class TestManaging:
    def test_an_owner_rolls_the_secret_and_sees_the_new_one_once(self, client, owner, endpoint):
        client.force_login(owner)
        response = client.post(f"{ENDPOINTS}{endpoint.pk}/roll/", {"grace": "86400"})
        assert response.status_code == 200
        rolled = Endpoint.objects.get(pk=endpoint.pk)
        assert _shown_secret(response) == rolled.secret
        assert rolled.signing_secrets() == [rolled.secret, endpoint.secret]

    def test_an_owner_resends_a_delivery(self, client, owner, endpoint, sent, merchant, sale, receiver):
        sent(create_receipt, merchant, validate_sale(sale))
        delivery = Delivery.objects.get()
        client.force_login(owner)
        with_callbacks = sent
        response = with_callbacks(
            client.post, DELIVERIES, {"action": "resend_deliveries", "_selected_action": [delivery.pk]}
        )
        assert response.status_code == 302
        assert Delivery.objects.count() == 2
        assert [r["headers"]["Receco-Event-Id"] for r in receiver.requests] == [delivery.event.public_id] * 2

    def test_the_delivery_page_lists_its_attempts(self, client, owner, endpoint, sent, merchant, sale, receiver):
        receiver.answers = [503]
        sent(create_receipt, merchant, validate_sale(sale))
        Attempt.objects.update(duration_ms=1250)
        client.force_login(owner)
        content = client.get(f"{DELIVERIES}{Delivery.objects.get().pk}/change/").content.decode()
        took = ['<th scope="col">Took</th>', "Took: </span>1,250 ms</td>"]
        for text in ["answered HTTP 503", "503", *took, "Next try", "Failed, will retry"]:
            assert text in content, text
        assert "Duration" not in content

    def test_the_attempts_say_how_long_each_took_with_its_unit(self, client, owner, endpoint, sent, merchant, sale):
        sent(create_receipt, merchant, validate_sale(sale))
        attempt = Attempt.objects.get()
        Attempt.objects.filter(pk=attempt.pk).update(duration_ms=120)
        client.force_login(owner)
        listed = client.get(ATTEMPTS).content.decode()
        header = r'<th scope="col" class="sortable column-took">\s*<div class="text"><a href="[^"]+">Took</a>'
        assert re.search(header, listed)
        assert '<td class="field-took">120 ms</td>' in listed
        shown = client.get(f"{ATTEMPTS}{attempt.pk}/change/").content.decode()
        assert re.search(r"<label>Took:</label>\s*<div class=\"readonly\">120 ms</div>", shown)
        assert "Duration" not in listed + shown

    def test_re_enabling_clears_the_reason(self, client, owner, endpoint):
        Endpoint.objects.filter(pk=endpoint.pk).update(enabled=False, disabled_reason="Disabled: failing")
        client.force_login(owner)
        response = client.post(
            f"{ENDPOINTS}{endpoint.pk}/change/",
            {"url": endpoint.url, "description": "", "enabled": "on"},
        )
        assert response.status_code == 302
        endpoint.refresh_from_db()
        assert (endpoint.enabled, endpoint.disabled_reason) == (True, "")


def test_create_endpoint_refuses_unknown_event_types(merchant):
    with pytest.raises(ValidationError) as error:
        create_endpoint(merchant, "https://erp.example.com/", ["receipt.deleted"])
    assert error.value.messages == [
        "Unknown event type 'receipt.deleted'; choose from receipt.created, receipt.contact_updated, "
        "receipt.refunded, receipt.voided, delivery.failed, receipt.reported, receipt.report_failed"
    ]


class TestTimes:
    def test_a_deliverys_times_read_in_the_merchants_time_zone(self, client, owner, merchant, endpoint, sent, sale):
        from datetime import UTC, datetime

        merchant.time_zone = "Asia/Tokyo"
        merchant.save()
        sent(create_receipt, merchant, validate_sale(sale))
        delivery = Delivery.objects.to_endpoint(endpoint).get()
        moment = datetime(2026, 11, 25, 16, 5, tzinfo=UTC)
        Delivery.objects.filter(pk=delivery.pk).update(created_at=moment)
        Attempt.objects.filter(delivery=delivery).update(created_at=moment)
        client.force_login(owner)
        for url in (f"{DELIVERIES}{delivery.pk}/change/", DELIVERIES, ATTEMPTS):
            page = client.get(url).content.decode()
            assert "26 Nov 2026, 01:05 JST" in page, url
            assert "Nov. 25, 2026" not in page, url
