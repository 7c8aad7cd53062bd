"""Gift receipts (receipts.gifts, and their pages in customers.views.receipts): made from the
receipt's page or the sale's dashboard page, once per sale; the items and the shop's
return policy without a price, the payment, the card or the customer; found in the
dashboard by their own code, which opens the sale to refund."""

import re

import pytest
from django.test import Client
from django.utils.html import escape

from receipts import gifts
from receipts.models import GiftReceipt
from receipts.refunds import refund, validate_refund, void

pytestmark = pytest.mark.django_db

LIST = "/admin/receipts/receipt/"


@pytest.fixture
def sold(receipt_factory, merchant):
    merchant.return_policy = "Unopened items within 7 days, with this gift receipt."
    merchant.save()
    return receipt_factory(
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        customer_email="buyer@example.com",
        customer_phone="+2348031234589",
    )


def _make(client, receipt):
    return client.post(f"/app/receipt/{receipt.token}/gift")


def test_the_receipt_page_offers_a_gift_receipt_to_a_sale(client, sold):
    page = client.get(f"/app/receipt/{sold.token}").content.decode()
    assert f'<form class="gift-form" method="post" action="/app/receipt/{sold.token}/gift">' in page
    assert '<button type="submit" class="button button-secondary">Gift receipt</button>' in page


def test_asking_makes_one_gift_receipt_per_sale_and_opens_it(client, sold):
    first = _make(client, sold)
    assert first.status_code == 302
    gift = GiftReceipt.objects.get(receipt=sold)
    assert first["Location"] == f"/app/gift/{gift.token}"
    assert re.fullmatch(r"G[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}", gift.code)
    assert len(gift.token) >= 22
    again = Client().post(f"/app/receipt/{sold.token}/gift")
    assert again["Location"] == first["Location"]
    assert GiftReceipt.objects.count() == 1


def test_the_gift_receipt_shows_the_items_and_the_return_policy_and_no_price(client, sold):
    gift = gifts.gift_receipt(sold)
    response = client.get(f"/app/gift/{gift.token}")
    assert response.status_code == 200
    page = response.content.decode()
    assert '<span class="doc-title">Gift receipt</span>' in page
    assert '<span class="merchant-name">Mama Put Kitchen</span>' in page
    assert '<td><span class="item-name">Jollof rice</span></td>\n          <td class="num">2</td>' in page
    assert '<td><span class="item-name">Chapman</span></td>\n          <td class="num">1</td>' in page
    assert "<strong>Returns:</strong> Unopened items within 7 days, with this gift receipt." in page
    assert f'<dd class="code gift-code">{gift.code}</dd>' in page
    assert 'Bought on <time datetime="2026-11-22">22 November 2026</time>' in page
    # Nothing of the sale's amounts, payment, card, numbers or customer.
    for hidden in (
        "₦", "1,300", "500.00", "300.00", "Total", "Visa", "4242", "A1B2C3", "Card", "Payment",
        sold.short_code, sold.token, sold.receipt_number, "buyer", "@example.com", "+234", "*******89",
    ):  # fmt: skip
        assert hidden not in page, hidden
    assert response["Cache-Control"] == "private, no-cache"
    assert response["X-Robots-Tag"] == "noindex, nofollow"


def test_items_given_back_are_marked_returned(client, sold):
    refund(sold, validate_refund({"token": sold.token, "items": [{"index": 0, "quantity": 1}]}), keyed=True)
    sold.refresh_from_db()
    page = client.get(gifts.gift_receipt(sold).get_absolute_url()).content.decode()
    assert '<span class="refunded-mark">1 of 2 returned</span>' in page


def test_a_refund_or_a_voided_sale_has_none(client, sold, receipt_factory):
    made = refund(sold, validate_refund({"token": sold.token, "amount": 10000}), keyed=True).receipt
    response = _make(client, made)
    assert response.status_code == 400
    assert escape(gifts.NOT_A_SALE) in response.content.decode()
    assert '<form class="gift-form"' not in client.get(f"/app/receipt/{made.token}").content.decode()
    other = receipt_factory(token="rcpt_giftvoided_aaaa", short_code="GVOID1")
    void(other, "", keyed=True)
    response = _make(client, other)
    assert response.status_code == 400
    assert "This sale was voided: it has no gift receipt." in response.content.decode()
    assert not GiftReceipt.objects.exists()


def test_an_unknown_gift_link_is_the_friendly_404(client):
    response = client.get("/app/gift/nosuchgiftreceipt_000000")
    assert response.status_code == 404
    assert "We can’t find that gift receipt" in response.content.decode()


def test_merchant_text_on_a_gift_receipt_is_escaped(client, receipt_factory, merchant):
    merchant.return_policy = "<script>alert('policy')</script>"
    merchant.save()
    sale = receipt_factory(
        merchant_name="<b>Shop</b>",
        items=[{"name": "<img src=x onerror=alert(1)>", "quantity": 1, "unit_price": 130000, "total_price": 130000}],
    )
    page = client.get(gifts.gift_receipt(sale).get_absolute_url()).content.decode()
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "<b>Shop</b>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;script&gt;alert(&#x27;policy&#x27;)&lt;/script&gt;" in page


def test_gift_receipts_are_limited_as_the_send_form_is(client, sold, settings):
    settings.RECECO_CONTACT_FORM_RATE = "2/h"
    assert _make(client, sold).status_code == 302
    assert _make(client, sold).status_code == 302
    response = _make(client, sold)
    assert response.status_code == 429
    assert "Too many requests from your network: at most 2 per hour. Wait a while, then try again." in (
        response.content.decode()
    )
    assert response["Retry-After"] == "3600"


def test_the_shop_finds_the_sale_by_the_gift_code_in_one_step(client, owner, sold):
    gift = gifts.gift_receipt(sold)
    client.force_login(owner)
    for typed in (gift.code, gift.code.lower(), f" {gift.code} "):
        response = client.get(LIST, {"q": typed})
        assert response.status_code == 302, typed
        assert response["Location"] == f"{LIST}{sold.pk}/change/"
    # The sale's page, found so, offers its refund.
    page = client.get(f"{LIST}{sold.pk}/change/").content.decode()
    assert f'href="{LIST}{sold.pk}/refund/"' in page


def test_another_shop_does_not_find_it(client, outsider, sold):
    gift = gifts.gift_receipt(sold)
    client.force_login(outsider)
    response = client.get(LIST, {"q": gift.code})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0


def test_the_sales_dashboard_page_has_the_gift_receipt_button(client, owner, sold):
    client.force_login(owner)
    page = client.get(f"{LIST}{sold.pk}/change/").content.decode()
    assert f'<form class="gift-tool" method="post" action="/app/receipt/{sold.token}/gift">' in page


def test_gift_codes_read_as_typed_and_never_as_a_short_code():
    assert gifts.is_code("GK7P2QX")
    assert gifts.is_code(" gk7p2qx ")
    assert not gifts.is_code("K7P2QX")  # a receipt's short code
    assert not gifts.is_code("GK7P2Q0")  # 0 is never in a code the service makes
    assert not gifts.is_code("XK7P2QX")
    assert gifts.is_code(gifts.new_code())
