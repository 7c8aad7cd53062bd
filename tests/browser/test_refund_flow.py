"""A shop owner at the counter, in a real headless Chromium at phone and laptop size: signs in
with a second factor (a code of their authenticator app), finds a sale by its amount and by
the card's last four, reads the receipt as the customer sees it beside the staff's details,
refunds one item after reading what the customer gets back and why it is more than the
item's price, opens the refund receipt, refunds an amount typed without choosing "An amount",
voids another sale, and reads both in the audit trail (who, when, from where, what); axe finds
nothing on the pages, and none of them scrolls sideways."""

import re

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


def _code(device) -> str:
    """What the owner's authenticator app shows now: the TOTP of the device's key."""
    from django_otp.oath import TOTP

    return str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)


def test_an_owner_finds_refunds_and_voids_at_the_counter(
    counter, live_server, owner, receipt_factory, settings, artifacts
):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from receipts.models import Receipt

    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)

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
    expect(page.get_by_role("heading", name="Sign in: step 2")).to_be_visible()
    counter.check("dashboard-sign-in-step-2")
    page.screenshot(path=artifacts / f"dashboard-sign-in-step-2-{size}.png", full_page=True)
    # The phone brings up its number pad, and offers the code the app or a message gave.
    code = page.get_by_label(re.compile(r"^Code"))
    expect(code).to_have_attribute("inputmode", "numeric")
    expect(code).to_have_attribute("autocomplete", "one-time-code")
    # The button is the dashboard's teal button, not the browser's grey one.
    sign_in = page.get_by_role("button", name="Sign in")
    expect(sign_in).to_have_css("background-color", "rgb(15, 118, 110)")
    expect(sign_in).to_have_css("color", "rgb(255, 255, 255)")
    # A slip of the finger, then the right code at once: signed in, not "too many".
    code.fill("000000" if _code(device) != "000000" else "111111")
    sign_in.click()
    expect(page.get_by_text("That code is not right.")).to_be_visible()
    page.get_by_label(re.compile(r"^Code")).fill(_code(device))
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Mama Put Kitchen: "))).to_be_visible()

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

    # The sale's page: the staff's details (the customer's email, for the owner) beside the
    # receipt as the customer sees it, which names no contact.
    expect(page.locator(".field-customer_email")).to_contain_text("ada@example.com")
    customer_view = page.locator(".sale-customer .receipt")
    expect(customer_view.locator(".total-big")).to_have_text("₦1,612.50")
    expect(customer_view.locator(".details")).to_contain_text("Visa •••• 4242")
    assert "ada@" not in customer_view.inner_text()
    sides = [page.locator(side).bounding_box() for side in (".sale-staff", ".sale-customer")]
    if counter.is_phone:  # one above the other
        assert sides[1]["y"] >= sides[0]["y"] + sides[0]["height"]
    else:  # side by side
        assert sides[1]["x"] >= sides[0]["x"] + sides[0]["width"]
        assert sides[1]["y"] < sides[0]["y"] + 100
    counter.check("dashboard-sale")
    page.screenshot(path=artifacts / f"dashboard-sale-{size}.png", full_page=True)

    page.get_by_role("link", name="Refund", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Refund sale CARD01")
    counter.check("dashboard-refund")
    page.screenshot(path=artifacts / f"dashboard-refund-{size}.png", full_page=True)
    page.get_by_label("Chosen items").check()
    page.get_by_label("Chapman").fill("1")
    page.get_by_label("Reason").fill("Spilt at the table")
    page.get_by_role("button", name="Review the refund").click()

    expect(page.get_by_role("heading", name="The customer gets back ₦322.50")).to_be_visible()
    # Why not the ₦300.00 the Chapman cost: said in words before the owner confirms.
    expect(page.locator(".refund-why")).to_have_text(
        "The sale had VAT 7.5% on top; this item's share of it is ₦22.50, so the customer gets back ₦322.50, "
        "not ₦300.00."
    )
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

    # An amount, typed as the customer says it, with "Chosen items" still ticked: the form
    # ticks "An amount" as it is typed, and refunds that amount in one go.
    page.goto(f"{live_server.url}/admin/receipts/receipt/{sale.pk}/refund/")
    expect(page.get_by_label("Chosen items")).to_be_checked()
    page.get_by_label("Amount in NGN").fill("150")
    expect(page.get_by_label("An amount")).to_be_checked()
    page.get_by_label("Reason").fill("Waited too long")
    counter.check("dashboard-refund-amount")
    page.screenshot(path=artifacts / f"dashboard-refund-amount-{size}.png", full_page=True)
    page.get_by_role("button", name="Review the refund").click()
    expect(page.get_by_role("heading", name="The customer gets back ₦150.00")).to_be_visible()
    page.get_by_role("button", name="Yes, refund ₦150.00").click()
    expect(page.locator(".messagelist")).to_contain_text("Refunded ₦150.00: refund receipt")
    assert sorted(Receipt.objects.filter(refund_of=sale).values_list("total_amount", flat=True)) == [15000, 32250]

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

    # Both in the audit trail: who, when, from which address, what changed.
    page.get_by_role("link", name="Audit trail").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Audit trail")
    refunded = page.locator(
        "#result_list tbody tr", has_text=f"Refunded ₦322.50 of sale CARD01: refund {made.short_code}"
    )
    voided = page.locator("#result_list tbody tr", has_text="Voided sale TWICE1")
    for row, changes in [
        (refunded, ["refund of sale: CARD01", "amount: ₦322.50", "reason: Spilt at the table"]),
        (voided, ["sale: TWICE1", "reason: Rung up twice"]),
    ]:
        expect(row).to_have_count(1)
        expect(row.locator(".field-who")).to_have_text(owner.username)
        expect(row.locator(".field-address")).to_have_text("127.0.0.1")
        expect(row.locator(".field-when")).to_contain_text(" WAT")
        for change in changes:
            expect(row.locator(".field-change_list")).to_contain_text(change)
    counter.check("dashboard-audit-trail-refund-void")
    page.screenshot(path=artifacts / f"dashboard-audit-trail-refund-void-{size}.png", full_page=True)
    counter.assert_clean()
