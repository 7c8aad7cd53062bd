import pytest
from django.core import mail

from messaging.models import Delivery

pytestmark = pytest.mark.django_db

URL = "/admin/messaging/delivery/"


@pytest.fixture
def failed(receipt):
    return Delivery.objects.create(
        merchant=receipt.merchant,
        receipt=receipt,
        channel="email",
        destination="customer@example.com",
        status="failed",
        attempts=5,
        last_error="SMTPServerDisconnected: gone",
    )


def test_deliveries_are_listed_with_the_destination_masked(admin_client, failed):
    html = admin_client.get(URL).content.decode()
    assert "c*******@example.com" in html
    assert "customer@example.com" not in html
    assert "K7P2QX" in html


def test_the_detail_page_masks_the_destination_and_shows_the_error(admin_client, failed):
    html = admin_client.get(f"{URL}{failed.pk}/change/").content.decode()
    assert "c*******@example.com" in html
    assert "customer@example.com" not in html
    assert "SMTPServerDisconnected: gone" in html


def test_deliveries_cannot_be_added_or_edited(admin_client, failed):
    assert admin_client.get(f"{URL}add/").status_code == 403
    response = admin_client.post(f"{URL}{failed.pk}/change/", {"status": "sent"})
    assert response.status_code == 403


def test_failed_deliveries_can_be_tried_again(admin_client, failed, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(URL, {"action": "retry_now", "_selected_action": [failed.pk]}, follow=True)
    assert "1 deliveries queued again." in response.content.decode()
    failed.refresh_from_db()
    assert (failed.status, failed.attempts) == ("sent", 1)
    assert len(mail.outbox) == 1


def test_staff_without_permission_cannot_see_deliveries(client, django_user_model, failed):
    staff = django_user_model.objects.create_user("clerk", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(URL).status_code == 403


def test_merchant_staff_see_only_their_merchants_deliveries(client, member, outsider, failed):
    client.force_login(member)
    assert "c*******@example.com" in client.get(URL).content.decode()
    assert client.get(f"{URL}{failed.pk}/change/").status_code == 200
    client.force_login(outsider)
    assert "c*******@example.com" not in client.get(URL).content.decode()
    assert client.get(f"{URL}{failed.pk}/change/").status_code in (302, 403, 404)


def test_each_delivery_shows_its_providers_report(client, owner, receipt):
    import re
    from datetime import UTC, datetime

    reported = datetime(2026, 11, 25, 9, 4, tzinfo=UTC)
    for destination, report, reason in (
        ("+2348031234567", "failed", "Invalid phone number"),
        ("+2348031234568", "read", ""),
    ):
        Delivery.objects.create(
            merchant=receipt.merchant, receipt=receipt, channel="whatsapp", destination=destination, status="sent",
            report=report, report_reason=reason, reported_at=reported,
        )  # fmt: skip
    client.force_login(owner)
    html = client.get(URL).content.decode()
    reports = re.findall(r'<td class="field-provider_report">([^<]*)</td>', html)
    assert sorted(reports) == ["Not delivered: Invalid phone number", "Read"]
    assert client.get(URL, {"report__exact": "failed"}).context["cl"].result_count == 1
    failed = Delivery.objects.get(report="failed")
    page = client.get(f"{URL}{failed.pk}/change/").content.decode()
    assert "Not delivered: Invalid phone number" in page
    assert "25 Nov 2026, 10:04 WAT" in page


def test_the_bulk_action_select_is_shown_only_to_those_who_may_act(client, owner, member, failed):
    client.force_login(member)
    html = client.get(URL).content.decode()
    assert 'name="action"' not in html
    assert 'class="action-select"' not in html
    response = client.post(URL, {"action": "retry_now", "_selected_action": [failed.pk]})
    failed.refresh_from_db()
    assert (response.status_code, failed.status) == (200, "failed")  # no such action for a member
    client.force_login(owner)
    assert (
        '<option value="retry_now">Try the selected failed deliveries again now</option>'
        in client.get(URL).content.decode()
    )


def test_the_channel_is_said_in_words(admin_client, failed, receipt):
    Delivery.objects.create(
        merchant=receipt.merchant, receipt=receipt, channel="sms", destination="+2348031234567", status="sent"
    )

    listed = admin_client.get(URL).content.decode()
    texts = admin_client.get(URL, {"channel": "sms"}).content.decode()

    assert '<td class="field-channel_words">Text message</td>' in listed
    assert '<td class="field-channel_words">Email</td>' in listed
    assert '<a href="?channel=sms">Text message</a>' in listed  # the filter
    assert ">sms<" not in listed
    assert "+234*******67" in texts
    assert "c*******@example.com" not in texts
