"""At the counter, with a customer waiting, on a 360 px phone and a laptop (issue 37's "Done
when"): the owner signs in with the number pad (the second step's code field), finds a sale
from Today in one step by an item's name and by the card's last four, opens it and reads
what became of the receipt sent and of its report to NRS, refunds an amount typed as the
customer says it after reading why a refund of an item gives back other than its price,
makes a gift receipt and sends the sale's receipt again. On every page met no receipt
number, clock time or card breaks across lines, none is wider than its window and axe-core
finds nothing; screenshots are kept in test-artifacts/."""

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import violations
from tests.browser.conftest import LOGO_URL, PHONE, serve_from_here

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [pytest.param(PHONE, id="360x740"), pytest.param({"width": 1280, "height": 800}, id="1280x800")]
PHONE_NUMBER = "+2348031234589"
# Each receipt number (MP-2026-000001), clock time (18:02, 18:02 WAT) and card (Visa •••• 4242)
# shown on the page, and whether its text takes more than one line.
WRAPPED = r"""() => {
    const pattern = /\b[A-Z0-9]{2,12}-\d{4}-\d{6}\b|\b\d{1,2}:\d{2}(?: [A-Z]{3,4}\b)?|(?:[A-Z][a-z]+ )?•••• ?\d{4}/g;
    const found = [];
    const walk = root => {  // the page, and the shadow roots in it (the customer's view of a sale)
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const node = walker.currentNode;
            if (node.shadowRoot) walk(node.shadowRoot);
            if (node.nodeType === Node.TEXT_NODE) read(node);
        }
    };
    const read = node => {
        for (const match of node.data.matchAll(pattern)) {
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const rects = [...range.getClientRects()].filter(rect => rect.width > 0);
            if (!rects.length) continue;  // not shown
            const first = rects[0];
            found.push([match[0], rects.some(rect => rect.top >= first.bottom - 1)]);
        }
    };
    walk(document.body);
    return found;
}"""


def _code(device) -> str:
    """What the owner's authenticator app shows now: the TOTP of the device's key."""
    from django_otp.oath import TOTP

    return str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)


def _checked(page, size, *shown: str, axe: bool = True) -> None:
    """The page fits its window, axe finds nothing (``axe``: not for a page audited here or
    in test_refund_flow.py already), and no number, time or card on it breaks across lines;
    ``shown``: texts of them the page must show (the check saw them)."""
    page.wait_for_load_state("load")  # its stylesheets applied
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], page.url
    assert not axe or violations(page) == [], page.url
    found = page.evaluate(WRAPPED)
    assert [text for text, wrapped in found if wrapped] == [], page.url
    texts = {text for text, _ in found}
    assert set(shown) <= texts, (page.url, texts)


@pytest.mark.parametrize("size", SIZES)
def test_an_owner_serves_a_customer_at_the_counter(
    browser, live_server, owner, merchant, receipt_factory, settings, size, artifacts
):
    from django.utils import timezone
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from einvoicing.models import Report
    from merchants.zones import local_time
    from messaging.models import Delivery
    from receipts.models import Receipt

    settings.RECECO_WEB_URL = live_server.url
    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    receipt_factory(token="rcpt_othersale_aaaaaa", short_code="OTHER1", items=[
        {"name": "Chapman", "quantity": 1, "unit_price": 130000, "total_price": 130000},
    ])  # fmt: skip
    sale = receipt_factory(
        transaction_date=timezone.now().isoformat(),
        items=[
            {"name": "Jollof rice (plate)", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Moi moi", "quantity": 1, "unit_price": 30000, "total_price": 30000},
        ],
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}],
        total_amount=139750,
        customer_phone=PHONE_NUMBER,
        payment_details={"card_brand": "visa", "card_last4": "4242"},
    )  # fmt: skip
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Delivery.objects.filter(receipt=sale).update(
        status="sent", created_at=an_hour_ago, report="failed", report_reason="Absent subscriber",
        reported_at=an_hour_ago, provider="twilio",
    )  # fmt: skip
    Report.objects.create(
        merchant=merchant, receipt=sale, document="invoice", irn="K7P2QX-94ND90NR-20261122",
        state="refused", message="Invalid TIN for supplier",
    )  # fmt: skip
    sold_at = local_time(sale.transaction_date, merchant.time_zone, "H:i")
    name = f"{size['width']}x{size['height']}"
    phone = size is PHONE
    context = browser.new_context(
        viewport=size, device_scale_factor=2 if phone else 1, is_mobile=phone, has_touch=phone
    )
    serve_from_here(context, live_server.url, external := [])  # the shop's logo from its CDN
    page = context.new_page()
    try:
        # Signed in with the phone's number pad: the code field asks for digits and offers the code received.
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill("not-used-in-tests")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Sign in: step 2")).to_be_visible()
        code = page.get_by_label(re.compile(r"^Code"))
        expect(code).to_have_attribute("inputmode", "numeric")
        expect(code).to_have_attribute("autocomplete", "one-time-code")
        _checked(page, size, axe=False)
        code.fill(_code(device))
        page.get_by_role("button", name="Sign in").click()

        # Today: the latest sales, and the header and task bar in one short band on a phone.
        expect(page.get_by_role("heading", name="Latest sales")).to_be_visible()
        _checked(page, size, f"{sold_at} WAT")
        if phone:  # a fifth of the screen at most, the task bar one row
            assert page.locator("nav.tasks").evaluate("nav => nav.getBoundingClientRect().bottom") <= 740 / 5
            tops = "items => new Set(items.map(item => item.getBoundingClientRect().top)).size"
            assert page.locator("nav.tasks li").evaluate_all(tops) == 1
        page.screenshot(path=artifacts / f"dashboard-today-{name}.png", full_page=True)

        # Found in one step from Today, by an item's name and by the card's last four.
        for typed, why in (("jollof", "item: Jollof rice (plate)"), ("4242", "card •••• 4242")):
            page.goto(f"{live_server.url}/admin/")
            page.get_by_role("searchbox", name="Find a sale").fill(typed)
            page.get_by_role("searchbox", name="Find a sale").press("Enter")
            rows = page.locator("#result_list tbody tr")
            expect(rows).to_have_count(1)
            expect(rows.locator(".field-matched")).to_have_text(why)
            _checked(page, size, *(["•••• 4242"] if typed == "4242" else []), axe=typed == "jollof")
            page.screenshot(path=artifacts / f"dashboard-found-{typed}-{name}.png", full_page=True)

        # The task bar's "Find a sale" puts the cursor in the box.
        page.goto(f"{live_server.url}/admin/receipts/receipt/?find=1")
        expect(page.get_by_label("Search")).to_be_focused()
        page.go_back()

        # The sale: what became of the receipt sent and of its report to NRS.
        rows.get_by_role("link", name=sale.short_code).click()
        staff = page.locator(".sale-staff")
        expect(staff).to_contain_text("the provider reports Not delivered: Absent subscriber")
        expect(staff).to_contain_text("Refused by NRS: Invalid TIN for supplier")
        expect(page.get_by_role("link", name="Print")).to_have_attribute("href", f"/app/receipt/{sale.token}")
        _checked(page, size, sale.receipt_number, f"{sold_at} WAT", "Visa •••• 4242")
        page.screenshot(path=artifacts / f"dashboard-sale-{name}.png", full_page=True)
        sale_url = page.url

        # Why a refund of a plate gives back more than its ₦500.00, in words, before confirming.
        page.get_by_role("link", name="Refund", exact=True).click()
        page.get_by_label("Jollof rice (plate)").fill("1")
        page.get_by_label("Reason").fill("Spilt at the table")
        page.get_by_role("button", name="Review the refund").click()
        expect(page.locator(".refund-why")).to_have_text(
            "The sale had VAT 7.5% on top; this item's share of it is ₦37.50, so the customer gets back ₦537.50, "
            "not ₦500.00."
        )
        _checked(page, size, "Visa •••• 4242", axe=False)
        page.screenshot(path=artifacts / f"dashboard-refund-why-{name}.png", full_page=True)

        # The owner refunds an amount instead, typed as the customer says it with "Chosen
        # items" still ticked: typing it ticks "An amount".
        page.goto(f"{live_server.url}/admin/receipts/receipt/{sale.pk}/refund/")
        expect(page.get_by_label("Chosen items")).to_be_checked()
        page.get_by_label("Amount in NGN").fill("1,000")
        expect(page.get_by_label("An amount")).to_be_checked()
        page.get_by_label("Reason").fill("Waited too long")
        page.get_by_role("button", name="Review the refund").click()
        expect(page.get_by_role("heading", name="The customer gets back ₦1,000.00")).to_be_visible()
        page.get_by_role("button", name="Yes, refund ₦1,000.00").click()
        expect(page.locator(".messagelist")).to_contain_text("Refunded ₦1,000.00: refund receipt")
        assert list(Receipt.objects.filter(refund_of=sale).values_list("total_amount", flat=True)) == [100000]

        # A gift receipt: the items and the return policy, no price.
        page.get_by_role("button", name="Gift receipt").click()
        page.wait_for_url(re.compile(rf"{live_server.url}/app/gift/[A-Za-z0-9_-]{{24}}$"))
        expect(page.get_by_role("table", name="Items")).to_contain_text("Jollof rice (plate)")
        assert "₦" not in page.locator("body").inner_text()
        _checked(page, size)
        page.screenshot(path=artifacts / f"dashboard-gift-receipt-{name}.png", full_page=True)

        # Sent again to the customer's number.
        page.goto(sale_url)
        page.get_by_role("button", name="Send again").click()
        expect(page.locator(".messagelist")).to_have_text("Sent again to +234*******89 (Text message).")
        _checked(page, size, sale.receipt_number, "Visa •••• 4242", axe=False)
        page.screenshot(path=artifacts / f"dashboard-sent-again-{name}.png", full_page=True)
        assert Delivery.objects.filter(receipt=sale).count() == 2
        assert set(external) <= {LOGO_URL}, external
    finally:
        context.close()
