import re
from datetime import UTC, datetime

import pytest
from django.test import Client

from receipts.models import Receipt
from receipts.rendering.messages import compose_email

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
    assert "Sun 22 Nov 2026, 11:15 WAT" in _text(_page(client, receipt))
    assert 'datetime="2026-11-22T10:15:00.000Z"' in _page(client, receipt)


def test_the_time_zone_is_the_merchants(client, receipt, merchant):
    merchant.time_zone = "Europe/London"
    merchant.save()
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


@pytest.mark.parametrize("logo", ["http://[::1", "https://cdn.example:99999/a.png"])
def test_a_logo_stored_before_it_was_refused_is_not_shown(client, receipt, logo):
    receipt.merchant_logo = logo
    receipt.save(update_fields=["merchant_logo"])
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    assert b'class="logo"' not in response.content
    assert "img-src 'self' data:;" in response["Content-Security-Policy"]
    assert receipt.message_url in compose_email(receipt, "customer@example.com").body


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


@pytest.mark.parametrize("reference", ["ZZZZZZ", "bad!token"])
def test_the_not_found_page_repeats_what_was_looked_for(client, receipt, reference):
    html = client.get(f"/app/receipt/{reference}").content.decode()
    assert f'You looked for <strong class="code typed">{reference}</strong>. Check it against your receipt slip' in html


def test_what_was_looked_for_is_escaped_and_cut_to_a_tokens_length(client, receipt):
    typed = "<img src=x onerror=alert(1)>" + "A" * 100
    html = client.get(f"/app/receipt/{typed}").content.decode()
    assert "<img src=x" not in html
    assert f'<strong class="code typed">&lt;img src=x onerror=alert(1)&gt;{"A" * 36}</strong>' in html


def test_a_receipt_not_uploaded_yet_is_looked_for_again(client, receipt):
    # The agent prints the QR code before an offline sale reaches the service.
    html = client.get("/app/receipt/rcpt_mfx3k2zz_notyet").content.decode()
    assert '<script src="/static/receipts/recheck.js" defer></script>' in html
    assert '<p id="recheck" role="status" data-seconds="30" data-tries="20"></p>' in html
    assert '<a class="button" href="/app/receipt/rcpt_mfx3k2zz_notyet">Look again now</a>' in html
    assert "the shop may still be sending it" in html
    assert "http-equiv" not in html  # WCAG 2.2.1: no refresh the reader did not ask for


def test_a_malformed_reference_is_not_looked_for_again(client, receipt):
    html = client.get("/app/receipt/bad!token").content.decode()
    assert "recheck" not in html


def test_the_page_is_not_cached_or_indexed(client, receipt):
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response["Cache-Control"] == "private, no-cache"
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert response["Referrer-Policy"] == "same-origin"  # the token never leaks to the logo's host


def test_head_requests_work(client, receipt):
    assert client.head(f"/app/receipt/{receipt.token}").status_code == 200


def test_other_methods_are_refused(client, receipt):
    assert client.delete(f"/app/receipt/{receipt.token}").status_code == 405


def test_the_page_is_one_small_response_from_four_queries(client, receipt, django_assert_max_num_queries):
    # The receipt, its merchant (identity, time zone), its deliveries, its e-invoice's stamp (receipts.annexes).
    with django_assert_max_num_queries(4):
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
    client, receipt, merchant, moment, zone, shown
):
    # Dates are refused outside 2000 to tomorrow now; rows stored before that must still show.
    merchant.time_zone = zone
    merchant.save()
    Receipt.objects.filter(pk=receipt.pk).update(transaction_date=moment)
    receipt.refresh_from_db()
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    day, _, clock = shown.rpartition(", ")
    # The clock time and its zone kept on one line (customers/templatetags/unbroken.py).
    assert f'{day}, <span class="keep">{clock}</span>' in response.content.decode()
    assert shown in compose_email(receipt, "customer@example.com").body


@pytest.fixture
def identified(merchant):
    merchant.legal_name = "Mama Put Foods Ltd"
    merchant.address = "12 Admiralty Way\nLekki Phase 1, Lagos"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.registration_number = "RC1234567"
    merchant.support_email = "help@mamaput.example.com"
    merchant.return_policy = "Unopened drinks within 7 days."
    merchant.receipt_footer = "Thank you for eating with us!"
    merchant.save()
    return merchant


def test_the_page_states_who_issued_it(client, identified, receipt):
    text = _text(_page(client, receipt))
    for shown in (
        "Mama Put Foods Ltd",
        "12 Admiralty Way Lekki Phase 1, Lagos",
        "TIN 12345678-0001 · RC1234567",
        "help@mamaput.example.com",
        "Returns: Unopened drinks within 7 days.",
        "Thank you for eating with us!",
    ):
        assert shown in text


def test_the_page_shows_the_breakdown_and_the_card(client, receipt_factory):
    receipt = receipt_factory(
        subtotal_amount=130000,
        discount_amount=10000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False}],
        tip_amount=5000,
        total_amount=134000,
        payment_method="bank_transfer",
        payment_details={"card_brand": "visa", "card_last4": "4242"},
    )
    text = _text(_page(client, receipt))
    assert "Subtotal ₦1,300.00 Discount -₦100.00 VAT 7.5% ₦90.00 Tip ₦50.00 Total ₦1,340.00" in text
    assert "Payment Bank transfer · Visa •••• 4242" in text


def test_a_refunded_sale_and_its_refund_link_each_other(client, api, stored, live_key):
    headers = {"Authorization": f"Bearer {live_key.key}"}
    _, body = api.post("refundReceipt", {"token": stored.token, "amount": 30000, "reason": "Cold food"}, **headers)
    refund = body["result"]["data"]
    sale_page = _page(client, stored)
    assert "Partly refunded · ₦300.00 of ₦1,300.00 given back." in _text(sale_page)
    number = Receipt.objects.get(token=refund["token"]).receipt_number
    assert f'href="/app/receipt/{refund["token"]}">Refund {number}</a>: ₦300.00' in sale_page
    refund_page = client.get(f"/app/receipt/{refund['token']}").content.decode()
    link = f'<a href="/app/receipt/{stored.token}">receipt STORE1</a>'
    assert f"<strong>Refund</strong> · money given back for {link}: Cold food." in " ".join(refund_page.split())
    assert "Refunded to you ₦300.00" in _text(refund_page)


def test_a_voided_sale_says_so(client, api, stored, live_key):
    api.post("voidReceipt", {"token": stored.token, "reason": "Rung up twice"}, Authorization=f"Bearer {live_key.key}")
    text = _text(_page(client, stored))
    assert "Voided · this sale was cancelled on" in text
    assert ": Rung up twice." in text
    assert "Status Voided" in text


def test_the_receipt_can_be_downloaded_as_an_open_receipt_format_document(client, stored):
    assert f'href="/app/receipt/{stored.token}/receipt.orf.json" download' in _page(client, stored)
    response = client.get(f"/app/receipt/{stored.token}/receipt.orf.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="receipt-STORE1.orf.json"'
    assert response.json()["receipt"]["receipt_id"] == stored.token


def test_the_email_states_who_issued_it(identified, receipt):
    body = compose_email(receipt, "customer@example.com").body
    assert "Mama Put Foods Ltd\n12 Admiralty Way\nLekki Phase 1, Lagos\nTIN 12345678-0001\nRC1234567\n" in body
    html = compose_email(receipt, "customer@example.com").alternatives[0][0]
    assert "<br>TIN 12345678-0001<br>RC1234567" in html
    assert "Returns: Unopened drinks within 7 days." in body
