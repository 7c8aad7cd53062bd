import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from receipts.messages import compose_email
from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def _page(client, receipt) -> str:
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    return response.content.decode()


def _text(html: str) -> str:
    """The visible text, tags dropped and whitespace collapsed."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def test_it_shows_the_receipt(client, receipt):
    text = _text(_page(client, receipt))
    assert "Mama Put Kitchen" in text
    assert "Lekki Phase 1" in text
    assert "Jollof rice 2 × ₦500.00 ₦1,000.00" in text
    assert "Chapman 1 × ₦300.00 ₦300.00" in text
    assert "Total ₦1,300.00" in text
    assert "Payment Card" in text
    assert "Status Completed" in text
    assert "Receipt code K7P2QX" in text


def test_the_date_is_shown_in_the_shops_time_zone(client, receipt):
    # 10:15 UTC is 11:15 in Lagos.
    assert "Sun 22 Nov 2026, 11:15" in _text(_page(client, receipt))
    assert 'datetime="2026-11-22T10:15:00.000Z"' in _page(client, receipt)


def test_the_time_zone_is_configurable(client, receipt, settings):
    settings.RECECO_TIME_ZONE = "Europe/London"
    assert "22 November 2026, 10:15 GMT" in _text(_page(client, receipt))


def test_the_merchant_colour_and_logo_are_used(client, receipt_factory, merchant):
    merchant.logo_url, merchant.accent_color = "https://img.example.com/logo.png", "#1d4ed8"
    merchant.save()
    receipt = receipt_factory()
    response = client.get(f"/app/receipt/{receipt.token}")
    html = response.content.decode()
    assert '<img class="logo" src="https://img.example.com/logo.png"' in html
    nonce = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"]).group(1)
    assert f'<style nonce="{nonce}">:root {{ --accent: #1d4ed8; --accent-text: #ffffff; }}</style>' in html
    assert "img-src 'self' data: https://img.example.com;" in response["Content-Security-Policy"]


def test_a_bad_accent_colour_never_reaches_css(client, receipt):
    receipt.accent_color = "</style"  # the column holds 7 characters
    receipt.save(update_fields=["accent_color"])  # bypassing validation, as a bad migration might
    html = _page(client, receipt)
    assert "--accent: #0f766e;" in html
    assert html.count("</style") == 1


def test_every_merchant_field_is_escaped(client, receipt_factory, merchant):
    evil = "<script>alert(1)</script>"
    merchant.name = f"{evil} Shop"
    merchant.save()
    receipt = receipt_factory(
        location=f"{evil} Street",
        payment_method=evil,
        status=evil,
        items=[{"name": f"<img src=x onerror=alert(1)>{evil}", "quantity": 1, "unit_price": 1, "total_price": 1}],
        total_amount=1,
    )
    html = _page(Client(), receipt)
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Shop" in html


def test_a_logo_that_is_not_http_is_not_shown(client, receipt):
    receipt.merchant_logo = "javascript:alert(1)"
    receipt.save(update_fields=["merchant_logo"])
    response = client.get(f"/app/receipt/{receipt.token}")
    assert b'class="logo"' not in response.content
    assert "javascript" not in response["Content-Security-Policy"]


def test_the_policy_allows_no_inline_script_and_no_other_origin(client, receipt):
    response = client.get(f"/app/receipt/{receipt.token}")
    policy = response["Content-Security-Policy"]
    assert policy.startswith("default-src 'self'; script-src 'self'; style-src 'self' 'nonce-")
    assert "frame-ancestors 'none'" in policy
    html = response.content.decode()
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="/static/receipts/receipt.js" defer>']
    body = html.split("<body")[1].replace(f'src="{receipt.merchant_logo}"', "")
    assert not re.search(r"""(src|href|action)=["']?(https?:)?//""", body)


def test_a_test_receipt_says_so(client, test_receipt, receipt):
    assert "Test receipt" in _text(_page(client, test_receipt))
    assert "Test receipt" not in _text(_page(client, receipt))


def test_items_that_do_not_add_up_show_the_difference(client, receipt_factory):
    receipt = receipt_factory(total_amount=139750)  # VAT 7.5% on ₦1,300
    text = _text(_page(client, receipt))
    assert "Subtotal ₦1,300.00 Taxes, charges and discounts ₦97.50 Total ₦1,397.50" in text


def test_zero_decimal_currencies(client, receipt_factory):
    receipt = receipt_factory(
        currency="JPY",
        total_amount=1500,
        items=[{"name": "Ramen", "quantity": 2, "unit_price": 750, "total_price": 1500}],
    )
    assert "Ramen 2 × ¥750 ¥1,500" in _text(_page(client, receipt))


def test_the_page_carries_a_qr_code_of_itself(client, receipt):
    html = _page(client, receipt)
    assert f"<title>QR code of this receipt, {receipt.public_url}</title>" in html


def test_contact_data_is_never_shown_unmasked(client, receipt):
    receipt.customer_email = "customer@example.com"
    receipt.customer_phone = "+2348031234589"
    receipt.save()
    html = _page(client, receipt)
    assert "customer@example.com" not in html
    assert "2348031234589" not in html


def test_a_short_code_redirects_to_the_token_page(client, receipt):
    response = client.get("/app/receipt/k7p2qx")
    assert response.status_code == 302
    assert response["Location"] == f"/app/receipt/{receipt.token}"


@pytest.mark.parametrize("reference", ["rcpt_unknown_000000", "ZZZZZZ", "bad!token"])
def test_an_unknown_receipt_gets_a_friendly_404(client, receipt, reference):
    response = client.get(f"/app/receipt/{reference}")
    assert response.status_code == 404
    assert "We can’t find that receipt" in response.content.decode()
    assert "Content-Security-Policy" in response


def test_a_receipt_not_uploaded_yet_is_looked_for_again(client, receipt):
    # The agent prints the QR code before an offline sale reaches the service.
    html = client.get("/app/receipt/rcpt_mfx3k2zz_notyet").content.decode()
    assert '<meta http-equiv="refresh" content="30">' in html
    assert "the shop may still be sending it" in html


def test_a_malformed_reference_is_not_looked_for_again(client, receipt):
    html = client.get("/app/receipt/bad!token").content.decode()
    assert "http-equiv" not in html


def test_the_page_is_not_cached_or_indexed(client, receipt):
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response["Cache-Control"] == "private, no-cache"
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert response["Referrer-Policy"] == "same-origin"  # the token never leaks to the logo's host


def test_head_requests_work(client, receipt):
    assert client.head(f"/app/receipt/{receipt.token}").status_code == 200


def test_other_methods_are_refused(client, receipt):
    assert client.delete(f"/app/receipt/{receipt.token}").status_code == 405


def test_the_page_is_one_small_response_from_two_queries(client, receipt, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):  # the receipt, its deliveries
        response = client.get(f"/app/receipt/{receipt.token}")
    assert len(response.content) < 16_000


def test_a_cache_outage_does_not_take_the_pages_down(client, receipt, settings, caplog, mailoutbox):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    assert client.get(f"/app/receipt/{receipt.token}").status_code == 200
    assert client.get("/app/scan", {"code": "ZZZZZZ"}).status_code == 404
    assert client.post(f"/app/receipt/{receipt.token}/send", {"email": "a@example.com"}).status_code == 302
    assert "Shared cache unavailable during rate limiting" in caplog.text


@pytest.mark.parametrize(
    ("moment", "zone", "shown"),
    [
        (datetime(9999, 12, 31, 23, 30, tzinfo=UTC), "Africa/Lagos", "31 December 9999, 23:30 UTC"),
        (datetime(1, 1, 1, 0, 30, tzinfo=UTC), "America/New_York", "1 January 0001, 00:30 UTC"),
    ],
)
def test_a_stored_date_at_the_calendars_edge_breaks_neither_page_nor_email(
    client, receipt, settings, moment, zone, shown
):
    # Dates are refused outside 2000 to tomorrow now; rows stored before that must still show.
    settings.RECECO_TIME_ZONE = zone
    Receipt.objects.filter(pk=receipt.pk).update(transaction_date=moment)
    receipt.refresh_from_db()
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    assert shown in response.content.decode()
    assert shown in compose_email(receipt, "customer@example.com").body
