"""What a receipt says it is, and what a refund gives back of its sale's tax and to which
card (receipts.rendering.documents), as the page, the email, getReceipt and ORF show them."""

import html
import re

import pytest

from receipts.models import Receipt
from receipts.rendering.documents import refund_share, refunded_items, title
from receipts.rendering.messages import compose_email
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

VAT = {"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}
CARD = {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"}


@pytest.fixture
def vat_sale(receipt_factory):
    """₦1,300.00 of food and 7.5 % VAT on top, paid by card: ₦1,397.50."""
    return receipt_factory(
        token="rcpt_vatsale1_aaaaaa",
        short_code="VAT123",
        subtotal_amount=130000,
        tax_lines=[VAT],
        total_amount=139750,
        payment_details=CARD,
    )


def _refund(api, key, sale, **request) -> Receipt:
    status, body = api.post("refundReceipt", {"token": sale.token, **request}, **bearer(key))
    assert status == 200, body
    return Receipt.objects.get(token=body["result"]["data"]["token"])


def test_a_receipt_says_what_it_is(api, live_key, receipt, vat_sale):
    assert title(receipt) == "Receipt"
    assert title(vat_sale) == "VAT receipt"
    assert title(_refund(api, live_key, vat_sale, amount=1000)) == "Refund receipt"
    assert title(Receipt.objects.get(pk=vat_sale.pk)) == "VAT receipt"  # partly refunded: still a VAT receipt
    api.post("voidReceipt", {"token": receipt.token, "reason": "Rung up twice"}, **bearer(live_key))
    assert title(Receipt.objects.get(pk=receipt.pk)) == "Voided"


def test_a_refund_of_items_gives_back_their_share_of_each_tax_line(api, live_key, vat_sale):
    refund = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    assert refund.total_amount == 53750  # ₦500.00 of rice and its VAT
    share = refund_share(refund, Receipt.objects.get(pk=vat_sale.pk))
    assert share.tax_lines == [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 50000, "tax_amount": 3750, "inclusive": False}
    ]
    assert share.payment_details == CARD


def test_the_shares_of_a_sale_refunded_whole_add_up_to_its_tax(api, live_key, vat_sale):
    # Three refunds of a third each would round to 3250 three times; the shares still add up.
    first = _refund(api, live_key, vat_sale, amount=46583)
    second = _refund(api, live_key, vat_sale, amount=46583)
    last = _refund(api, live_key, vat_sale)
    sale = Receipt.objects.get(pk=vat_sale.pk)
    taxes = [refund_share(refund, sale).tax_lines[0]["tax_amount"] for refund in (first, second, last)]
    assert taxes == [3250, 3250, 3250]
    assert sum(taxes) == 9750
    taxable = [refund_share(refund, sale).tax_lines[0]["taxable_amount"] for refund in (first, second, last)]
    assert sum(taxable) == 130000


def test_a_refund_of_an_amount_holds_its_tax_inside(api, live_key, vat_sale):
    refund = _refund(api, live_key, vat_sale, amount=13975)  # a tenth
    line = refund_share(refund, Receipt.objects.get(pk=vat_sale.pk)).tax_lines[0]
    assert (line["tax_amount"], line["taxable_amount"], line["inclusive"]) == (975, 13000, True)


def test_a_sale_without_tax_or_card_gives_a_refund_neither(api, live_key, stored):
    refund = _refund(api, live_key, stored, amount=1000)
    share = refund_share(refund, Receipt.objects.get(pk=stored.pk))
    assert (share.tax_lines, share.payment_details) == ([], None)


def test_refunded_items_by_their_place_in_the_sale(api, live_key, vat_sale):
    first = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    second = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}, {"index": 1, "quantity": 1}])
    assert refunded_items(first) == [{"index": 0, "quantity": 1}]
    assert refunded_items(second) == [{"index": 0, "quantity": 1}, {"index": 1, "quantity": 1}]
    assert refunded_items(Receipt.objects.get(pk=vat_sale.pk)) == [
        {"index": 0, "quantity": 2},
        {"index": 1, "quantity": 1},
    ]


# --- As customers and tax officers read them ---


def _text(page: str) -> str:
    """The visible text, tags dropped, entities read and whitespace collapsed."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", body).split()))


def test_the_page_is_titled_by_what_it_holds(client, vat_sale, receipt):
    page = client.get(f"/app/receipt/{vat_sale.token}").content.decode()
    assert "<title>VAT receipt · Mama Put Kitchen · ₦1,397.50" in page
    assert (
        '<h1 id="receipt-title"><span class="doc-title">VAT receipt</span><span class="visually-hidden">:</span> '
        '<span id="merchant-name" class="merchant-name">Mama Put Kitchen</span></h1>'
    ) in page
    assert '<span class="doc-title">Receipt</span>' in client.get(f"/app/receipt/{receipt.token}").content.decode()


def test_a_refund_page_shows_the_vat_refunded_and_the_card(client, api, live_key, vat_sale):
    refund = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    page = client.get(f"/app/receipt/{refund.token}").content.decode()
    text = _text(page)
    assert '<span class="doc-title">Refund receipt</span>' in page
    assert "Subtotal ₦500.00 VAT 7.5% refunded ₦37.50 Refund ₦537.50" in text
    assert "Share of the sale" not in text
    assert "Refunded to Card · Visa •••• 4242" in text
    assert '<p class="status status-refund">Refund</p>' in page
    assert "status-ok" not in page
    assert "Completed" not in text


def test_a_refund_of_a_discounted_sale_shows_its_share_of_the_discount(client, api, live_key, receipt_factory):
    sale = receipt_factory(
        subtotal_amount=130000,
        discount_amount=13000,
        tax_lines=[{**VAT, "taxable_amount": 117000, "tax_amount": 8775}],
        total_amount=125775,
    )
    refund = _refund(api, live_key, sale, items=[{"index": 1, "quantity": 1}])  # the Chapman, ₦300.00
    text = _text(client.get(f"/app/receipt/{refund.token}").content.decode())
    # 30000 / 130000 of 125775 paid is 29025: 2025 of VAT, and -3000 of the discount.
    assert "Subtotal ₦300.00 VAT 7.5% refunded ₦20.25 Share of the sale's discounts and charges -₦30.00" in text
    assert "Refund ₦290.25" in text


def test_the_sale_page_marks_refunded_items_and_links_each_refund(client, api, live_key, vat_sale):
    first = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    second = _refund(api, live_key, vat_sale, amount=1000)
    page = client.get(f"/app/receipt/{vat_sale.token}").content.decode()
    text = _text(page)
    assert "Jollof rice 2 × ₦500.00 1 of 2 refunded ₦1,000.00" in text
    assert "Chapman 1 × ₦300.00 ₦300.00" in text
    assert page.count('class="line-refunded"') == 1
    assert f'<a href="/app/receipt/{first.token}">Refund {first.receipt_number}</a>: ₦537.50' in page
    assert '<span class="refund-items">Jollof rice × 1</span>' in page
    assert f'<a href="/app/receipt/{second.token}">Refund {second.receipt_number}</a>: ₦10.00</li>' in page
    _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    assert "Jollof rice 2 × ₦500.00 Refunded ₦1,000.00" in _text(
        client.get(f"/app/receipt/{vat_sale.token}").content.decode()
    )


def test_a_voided_sales_total_is_struck_through_with_the_reason_beside_it(client, api, live_key, stored):
    api.post("voidReceipt", {"token": stored.token, "reason": "Rung up twice"}, **bearer(live_key))
    page = client.get(f"/app/receipt/{stored.token}").content.decode()
    assert (
        '<p class="total-big total-voided"><del>₦1,300.00</del> '
        '<span class="void-reason">Voided: Rung up twice</span></p>'
    ) in page
    assert '<tr class="total"><th scope="row">Total</th><td class="num"><del>₦1,300.00</del></td></tr>' in page
    assert '<span class="doc-title">Voided</span>' in page
    assert "<title>Voided · Mama Put Kitchen" in page


def test_the_email_says_what_it_is_and_what_came_back(api, live_key, vat_sale, stored):
    message = compose_email(vat_sale, "customer@example.com")
    assert message.subject == "Your VAT receipt from Mama Put Kitchen: ₦1,397.50"
    assert message.body.startswith("VAT RECEIPT\nYour VAT receipt from Mama Put Kitchen, Lekki Phase 1\n")
    assert "<title>VAT receipt · Mama Put Kitchen</title>" in message.alternatives[0][0]
    refund = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    message = compose_email(refund, "customer@example.com")
    assert message.subject == "Your refund receipt from Mama Put Kitchen: ₦537.50"
    assert "Subtotal: ₦500.00\nVAT 7.5% refunded: ₦37.50\nREFUNDED: ₦537.50\nRefunded to: Card Visa •••• 4242\n" in (
        message.body
    )
    page = message.alternatives[0][0]
    assert ">Refund receipt</div>" in page
    assert "Refunded to: <strong" in page
    sale_body = compose_email(Receipt.objects.get(pk=vat_sale.pk), "customer@example.com").body
    assert "  2 x ₦500.00 = ₦1,000.00 (1 of 2 refunded)\n" in sale_body
    api.post("voidReceipt", {"token": stored.token, "reason": "Rung up twice"}, **bearer(live_key))
    voided = compose_email(Receipt.objects.get(pk=stored.pk), "customer@example.com")
    assert voided.subject == "Your receipt from Mama Put Kitchen: ₦1,300.00 (voided)"
    assert ": Rung up twice." in voided.body
    assert "TOTAL: ₦1,300.00 (voided: not paid)" in voided.body
    assert "<del>₦1,300.00</del>" in voided.alternatives[0][0]


def test_get_receipt_gives_a_refunds_tax_and_card(api, live_key, vat_sale):
    refund = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    data = api.get("getReceipt", {"token": refund.token}, **bearer(live_key))[1]["result"]["data"]
    assert data["tax_lines"] == [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 50000, "tax_amount": 3750, "inclusive": False}
    ]
    assert data["payment_details"] == CARD
    assert data["title"] == "Refund receipt"
    sale = api.get("getReceipt", {"token": vat_sale.token})[1]["result"]["data"]
    assert sale["tax_lines"] == [VAT]
    assert sale["title"] == "VAT receipt"
    # The items refunded: in its ORF form (the plain answer's schema is closed).
    document = api.get("getReceipt", {"token": refund.token, "format": "orf"})[1]["result"]["data"]
    assert document["extensions"]["receco"]["title"] == "Refund receipt"
    assert document["extensions"]["receco"]["refunded_items"] == [{"index": 0, "quantity": 1}]


@pytest.fixture
def identified(merchant):
    merchant.legal_name = "Mama Put Foods Ltd"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.registration_number = "RC1234567"
    merchant.receipt_prefix = "MP"
    merchant.save()
    return merchant


def test_a_vat_receipt_and_its_refund_state_all_the_law_asks_everywhere(client, api, live_key, identified, vat_sale):
    """Issue 24's fields (number, registration, title, the refund's tax lines, the card) on
    the page, in both parts of the email, in getReceipt and in the ORF document (which
    tests/receipts/rendering/test_orf.py validates against the schema)."""
    refund = _refund(api, live_key, vat_sale, items=[{"index": 0, "quantity": 1}])
    year = vat_sale.number_series.rsplit("-", 1)[1]
    expected = {
        vat_sale.token: (f"MP-{year}-000001", "VAT receipt", "VAT 7.5%", 9750),
        refund.token: (f"MP-{year}-000002", "Refund receipt", "VAT 7.5% refunded", 3750),
    }
    for token, (number, document_title, tax_label, tax) in expected.items():
        receipt = Receipt.objects.get(token=token)
        email = compose_email(receipt, "customer@example.com")
        shown = {
            "page": _text(client.get(f"/app/receipt/{token}").content.decode()),
            "email text": email.body,
            "email HTML": _text(email.alternatives[0][0]),
        }
        for where, text in shown.items():
            for field in (number, "RC1234567", document_title, tax_label, "Visa", "4242"):
                assert field.upper() in text.upper(), (token, where, field)
        data = api.get("getReceipt", {"token": token})[1]["result"]["data"]
        assert data["receipt_number"] == number
        assert data["merchant_registration_number"] == "RC1234567"
        assert data["title"] == document_title
        assert [(line["name"], line["rate"], line["tax_amount"]) for line in data["tax_lines"]] == [("VAT", 7.5, tax)]
        assert (data["payment_details"]["card_brand"], data["payment_details"]["card_last4"]) == ("visa", "4242")
        document = api.get("getReceipt", {"token": token, "format": "orf"})[1]["result"]["data"]
        assert document["extensions"]["receco"]["receipt_number"] == number
        assert {"scheme": "NG_CAC", "value": "RC1234567"} in document["merchant"]["tax_identifiers"]
        assert document["extensions"]["receco"]["title"] == document_title
        assert document["tax"]["tax_lines"][0]["tax_amount"] == tax / 100
        assert document["payment"]["provider"] == "visa"
        assert document["extensions"]["receco"]["card_last4"] == "4242"
