"""A shop owner at the counter, in a real headless Chromium at phone and laptop size: finds a
sale by its amount and by the card's last four, refunds one item after reading what the
customer gets back, opens the refund receipt, voids another sale; axe finds nothing on the
new pages, and none of them scrolls sideways."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture(params=[pytest.param(PHONE, id="360x740"), pytest.param(DESKTOP, id="1280x800")])
def counter(request, browser, live_server, settings, artifacts):
    settings.RECECO_WEB_URL = live_server.url
    size = request.param
    phone = size["width"] < 600
    context = browser.new_context(viewport=size, device_scale_factor=2 if phone else 1, is_mobile=phone)
    page = context.new_page()
    yield Audit(page, size, artifacts)
    context.close()


def test_an_owner_finds_refunds_and_voids_at_the_counter(counter, live_server, owner, receipt_factory, artifacts):
    from receipts.models import Receipt

    sale = receipt_factory(
        token="rcpt_cardsale_aaaaaa",
        short_code="CARD01",
        items=[
            {"name": "Jollof rice with a long description of the chicken", "quantity": 2, "unit_price": 50000,
             "total_price": 100000},
            {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
            {"name": "Moi moi", "quantity": 1, "unit_price": 20000, "total_price": 20000},
        ],
        subtotal_amount=150000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 150000, "tax_amount": 11250, "inclusive": False}],
        total_amount=161250,
        payment_details={"card_brand": "visa", "card_last4": "4242"},
        customer_email="ada@example.com",
    )  # fmt: skip
    other = receipt_factory(token="rcpt_twicesl1_aaaaaa", short_code="TWICE1")
    page, size = counter.page, "360x740" if counter.is_phone else "1280x800"
    page.goto(f"{live_server.url}/admin/login/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()

    # Found by amount, as the customer says it, then by the card's last four.
    page.goto(f"{live_server.url}/admin/receipts/receipt/")
    page.get_by_label("Search").fill("1,612.50")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    expect(page.locator("#result_list tbody")).to_contain_text("CARD01")
    page.get_by_label("Search").fill("4242")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    # And by the day of the sale, in the shop's time zone, with the filter's two dates.
    sold = sale.transaction_date.date().isoformat()
    page.get_by_label("From").fill(sold)
    page.get_by_label("To", exact=True).fill(sold)
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_label("From")).to_have_value(sold)
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    counter.check("dashboard-receipts-found")
    page.screenshot(path=artifacts / f"dashboard-search-last4-{size}.png", full_page=True)
    page.get_by_role("link", name="CARD01").click()

    page.get_by_role("link", name="Refund", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Refund sale CARD01")
    counter.check("dashboard-refund")
    page.screenshot(path=artifacts / f"dashboard-refund-{size}.png", full_page=True)
    page.get_by_label("Chosen items").check()
    page.get_by_label("Chapman").fill("1")
    page.get_by_label("Reason").fill("Spilt at the table")
    page.get_by_role("button", name="Review the refund").click()

    expect(page.get_by_role("heading", name="The customer gets back ₦322.50")).to_be_visible()
    expect(page.locator(".refund-facts")).to_contain_text("Visa •••• 4242")
    expect(page.locator(".refund-facts")).to_contain_text("VAT 7.5% refunded")
    counter.check("dashboard-refund-confirm")
    page.screenshot(path=artifacts / f"dashboard-refund-confirm-{size}.png", full_page=True)
    page.get_by_role("button", name="Yes, refund ₦322.50").click()

    expect(page.locator(".messagelist")).to_contain_text("Refunded ₦322.50: refund receipt")
    made = Receipt.objects.get(refund_of=sale)
    # The sale's items count what was refunded of each, in the table's last column.
    expect(page.locator(".field-item_table tr", has_text="Chapman").locator("td").last).to_have_text("1")
    counter.check("dashboard-sale-refunded")
    page.screenshot(path=artifacts / f"dashboard-sale-refunded-{size}.png", full_page=True)
    page.locator(".messagelist").get_by_role("link", name=made.short_code).click()
    expect(page.locator(".field-refund_of_link")).to_contain_text("CARD01: Spilt at the table")

    # The other sale, rung up twice: voided.
    page.goto(f"{live_server.url}/admin/receipts/receipt/?q=twice1")
    page.get_by_role("link", name="Void", exact=True).click()
    counter.check("dashboard-void")
    page.screenshot(path=artifacts / f"dashboard-void-{size}.png", full_page=True)
    page.get_by_label("Reason").fill("Rung up twice")
    page.get_by_role("button", name="Yes, void this sale").click()
    expect(page.locator(".messagelist")).to_contain_text("Sale TWICE1 voided.")
    other.refresh_from_db()
    assert other.status == "voided"
    counter.assert_clean()
