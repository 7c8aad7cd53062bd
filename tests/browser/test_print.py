"""A receipt on paper (static/receipts/print.css): a VAT receipt of 20 items (on A4 and on
Letter), its refund and the sale once refunded (on A4) each print on one page; on 80 mm thermal paper the receipt fills
the roll's width and nothing spills past it; no block breaks across pages.

The PDFs and print-view screenshots are kept in test-artifacts/ for a person to look at.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Visit

pytestmark = pytest.mark.django_db(transaction=True)

A4_SCREEN = {"width": 1280, "height": 800}
THERMAL_WIDTH = 302  # 80 mm in CSS pixels
# What must never be cut in two by a page break.
BLOCKS = [".receipt-head", ".summary", ".items tbody tr", ".details", ".issuer", ".qr"]


def _pages(pdf: bytes) -> int:
    """The number of pages of a PDF as Chromium writes it (page objects are not compressed)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


@pytest.fixture
def identified(merchant):
    merchant.legal_name = "Mama Put Foods Ltd"
    merchant.address = "12 Admiralty Way\nLekki Phase 1, Lagos"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.registration_number = "RC1234567"
    merchant.phone = "+234 803 123 4589"
    merchant.support_email = "help@mamaput.example.com"
    merchant.return_policy = "Unopened drinks within 7 days, with this receipt."
    merchant.receipt_footer = "Thank you for eating with us!"
    merchant.receipt_prefix = "MP"
    merchant.save()
    return merchant


def _items(count: int) -> list[dict]:
    names = ["Jollof rice (plate)", "Fried plantain", "Chapman", "Bottled water 75cl", "Peppered goat meat"]
    return [
        {"name": f"{names[n % len(names)]} {n + 1}", "quantity": 1 + n % 3, "unit_price": 25000 + 500 * n,
         "total_price": (1 + n % 3) * (25000 + 500 * n)}
        for n in range(count)
    ]  # fmt: skip


def _vat_sale(receipt_factory, count: int, **overrides):
    items = _items(count)
    subtotal = sum(item["total_price"] for item in items)
    tax = subtotal * 75 // 1000
    return receipt_factory(
        items=items,
        subtotal_amount=subtotal,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": subtotal, "tax_amount": tax, "inclusive": False}],
        total_amount=subtotal + tax,
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        merchant_logo="https://cdn.example.com/mama-put.png",
        **overrides,
    )


@pytest.fixture
def printer(browser, live_server, settings):
    settings.RECECO_WEB_URL = live_server.url
    context = browser.new_context(viewport=A4_SCREEN)
    visit = Visit(context, live_server.url)
    yield visit.page
    context.close()


def _print(page, url: str, path, **paper) -> int:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    pdf = page.pdf(path=path, print_background=True, **paper)
    return _pages(pdf)


def test_a_20_item_vat_receipt_and_its_refund_print_on_one_a4_page_each(
    printer, live_server, identified, receipt_factory, artifacts
):
    from receipts.refunds import refund, validate_refund

    sale = _vat_sale(receipt_factory, 20)
    assert _print(printer, sale.public_url, artifacts / "print-vat-receipt-a4.pdf", format="A4") == 1
    assert _print(printer, sale.public_url, artifacts / "print-vat-receipt-letter.pdf", format="Letter") == 1
    lines = [{"index": index, "quantity": 1} for index in range(0, 20, 2)]
    made = refund(sale, validate_refund({"token": sale.token, "items": lines, "reason": "Cold food"}), keyed=True)
    assert _print(printer, made.receipt.public_url, artifacts / "print-refund-a4.pdf", format="A4") == 1
    assert _print(printer, sale.public_url, artifacts / "print-refunded-sale-a4.pdf", format="A4") == 1


def test_a_longer_receipt_takes_more_pages_never_cutting_a_block(printer, live_server, identified, receipt_factory):
    # The page count above is no constant: 60 items do not fit one page.
    sale = _vat_sale(receipt_factory, 60)
    assert _print(printer, sale.public_url, None, format="A4") > 1
    printer.emulate_media(media="print")
    for selector in BLOCKS:
        kept = printer.eval_on_selector_all(selector, "els => els.map(el => getComputedStyle(el).breakInside)")
        assert kept, selector
        assert set(kept) == {"avoid"}, selector


def test_on_80mm_thermal_paper_the_receipt_fills_the_roll_and_nothing_spills(
    browser, live_server, settings, identified, receipt_factory, artifacts
):
    settings.RECECO_WEB_URL = live_server.url
    sale = _vat_sale(receipt_factory, 20)
    context = browser.new_context(viewport={"width": THERMAL_WIDTH, "height": 740}, device_scale_factor=2)
    page = Visit(context, live_server.url).page
    try:
        page.goto(sale.public_url)
        page.emulate_media(media="print")
        page.screenshot(path=artifacts / "print-thermal-80mm.png", full_page=True)
        widths = page.evaluate(
            """() => ({
                page: document.documentElement.clientWidth,
                scroll: document.documentElement.scrollWidth,
                receipt: document.querySelector('.receipt').getBoundingClientRect().width,
                widest: Math.max(...[...document.querySelectorAll('.receipt *')].map(
                    el => el.getBoundingClientRect().right)),
            })"""
        )
        assert widths["scroll"] <= widths["page"]
        assert widths["widest"] <= widths["page"]
        assert widths["receipt"] >= widths["page"] * 0.9  # the roll's width, not A4's 120 mm column
        assert page.locator(".logo").is_hidden()  # a thermal head prints no colour pictures
        # A roll is one long page: the 20 items and all the rest on it.
        pdf = page.pdf(width="80mm", height="1000mm", path=artifacts / "print-thermal-80mm.pdf")
        assert _pages(pdf) == 1
    finally:
        context.close()


def test_a_stamped_receipt_prints_its_irn_and_the_nrs_qr_code_on_one_page(
    printer, live_server, identified, receipt_factory, artifacts
):
    from einvoicing.models import Report

    sale = _vat_sale(receipt_factory, 20)
    irn = f"{sale.receipt_number.replace('-', '')}-94ND90NR-20261122"
    Report.objects.create(
        merchant_id=identified.pk, receipt=sale, document="invoice", irn=irn, state="reported",
        qr_payload="UVIgcGF5bG9hZCBvZiBOUlM=" * 12,
    )  # fmt: skip
    assert _print(printer, sale.public_url, artifacts / "print-e-invoice-a4.pdf", format="A4") == 1
    printer.emulate_media(media="print")
    printer.screenshot(path=artifacts / "print-e-invoice.png", full_page=True)
    expect(printer.locator(".details .annex-reference")).to_have_text(irn)
    code = printer.get_by_role("img", name="NRS e-invoice QR code")
    expect(code).to_be_visible()
    assert code.bounding_box()["width"] >= 90  # 24 mm: big enough for NRS's app to read
    assert printer.locator(".annex-qr").evaluate("el => getComputedStyle(el).breakInside") == "avoid"


def test_a_gift_receipt_prints_on_one_page_with_no_price(printer, live_server, identified, receipt_factory, artifacts):
    from receipts import gifts

    sale = _vat_sale(receipt_factory, 20)
    gift = gifts.gift_receipt(sale)
    url = f"{live_server.url}{gift.get_absolute_url()}"
    assert _print(printer, url, artifacts / "print-gift-receipt-a4.pdf", format="A4") == 1
    printer.emulate_media(media="print")
    printer.screenshot(path=artifacts / "print-gift-receipt.png", full_page=True)
    shown = printer.locator("body").inner_text()
    assert "GIFT RECEIPT" in shown  # uppercase by its style
    assert "Returns: Unopened drinks within 7 days, with this receipt." in shown
    assert gift.code in shown
    assert "Jollof rice (plate) 1" in shown
    for price in ("₦", "Total", "VAT", "4242", "Visa", sale.short_code, sale.receipt_number):
        assert price not in shown, price
    # The share section (the link, the print button) is the screen's only.
    expect(printer.locator(".actions")).to_be_hidden()
