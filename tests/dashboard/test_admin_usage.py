"""The usage page: calls per key per day and receipts per day, drawn as inline SVG."""

import json

import pytest

from merchants.keys import issue_key
from merchants.usage import flush_usage
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _url(merchant):
    return f"/admin/merchants/merchant/{merchant.pk}/usage/"


def _call(client, issued, times):
    for _ in range(times):
        client.get("/api/trpc/getReceipt", {"input": json.dumps({"token": "ZZZZZZ"})}, headers=bearer(issued))


@pytest.fixture
def used(client, merchant, live_key, receipt_factory):
    receipt_factory()
    _call(client, live_key, 3)
    flush_usage()
    _call(client, live_key, 2)


@pytest.mark.parametrize("who", ["owner", "member", "superuser"])
def test_the_merchants_people_see_its_usage(client, merchant, used, live_key, request, who):
    client.force_login(request.getfixturevalue(who))
    response = client.get(_url(merchant))
    assert response.status_code == 200
    content = response.content.decode()
    assert "<svg" in content
    assert "<rect" in content
    assert f"Till 1 ({live_key.api_key.prefix})" in content
    assert ": Till 1 (" in content
    assert ": 5</title>" in content
    assert ": Live sales: 1</title>" in content
    # Drawn on the server: no script in the chart, nothing loaded from elsewhere.
    charts = [
        part.split("</svg>", 1)[0] for part in content.split('<svg xmlns="http://www.w3.org/2000/svg" role="img"')[1:]
    ]
    assert len(charts) == 2
    assert not any("<script" in chart or "href" in chart for chart in charts)
    assert 'src="http' not in content
    assert 'href="http' not in content


def test_an_outsider_cannot_see_it(client, outsider, merchant, used):
    client.force_login(outsider)
    assert client.get(_url(merchant)).status_code == 404


def test_key_names_are_escaped_in_the_chart(client, owner, merchant):
    issued = issue_key(merchant, "live", '<img src=x onerror="alert(1)">')
    _call(client, issued, 1)
    client.force_login(owner)
    content = client.get(_url(merchant)).content.decode()
    assert "<img src=x" not in content
    assert "&lt;img src=x" in content


def test_a_merchant_without_calls_gets_an_empty_chart(client, owner, merchant):
    client.force_login(owner)
    response = client.get(_url(merchant))
    assert response.status_code == 200
    assert b"No API calls with this shop's keys in this period." in response.content


def test_sms_parts_and_whatsapp_messages_are_shown_per_day(client, owner, merchant, receipt):
    """Issue 35: what the merchant's receipts cost to send, as the providers bill it."""
    from django.utils import timezone

    from messaging.models import Delivery

    now = timezone.now()
    for channel, parts in (("sms", 2), ("sms", 1), ("whatsapp", 1), ("email", 0)):
        Delivery.objects.create(channel=channel, merchant_id=merchant.pk, receipt=receipt, destination="x",
                                status=Delivery.Status.SENT, parts=parts, sent_at=now)  # fmt: skip
    client.force_login(owner)
    content = client.get(_url(merchant)).content.decode()
    assert "<h2>Messages sent to customers (UTC days)</h2>" in content
    day = f"{now:%a} {now.day} {now:%b %Y}"
    expected = f'<th scope="row" class="nowrap">{day}</th><td class="number">3</td><td class="number">1</td>'
    assert expected in content


def test_a_merchant_that_sent_no_texts_is_told_so(client, owner, merchant):
    client.force_login(owner)
    assert "No text messages or WhatsApp messages sent in this period." in client.get(_url(merchant)).content.decode()
