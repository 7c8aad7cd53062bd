"""At the counter, with a customer waiting, on a 360 px phone and a laptop: from Today the
owner finds a sale by an item's name and by the card's last four in one step, opens it,
reads what became of the receipt sent (the provider's report) and of its report to NRS,
and sends it again. axe-core finds nothing on the pages met, and none is wider than its
window; screenshots are kept in test-artifacts/."""

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import violations
from tests.browser.conftest import PHONE

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [pytest.param(PHONE, id="360x740"), pytest.param({"width": 1280, "height": 800}, id="1280x800")]
PHONE_NUMBER = "+2348031234589"


def _fits(page, size) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], page.url
    assert violations(page) == [], page.url


@pytest.mark.parametrize("size", SIZES)
def test_an_owner_finds_a_sale_opens_it_and_sends_it_again(
    browser, live_server, owner, merchant, receipt_factory, settings, size, artifacts
):
    from django.utils import timezone

    from einvoicing.models import Report
    from messaging.models import Delivery

    settings.RECECO_WEB_URL = live_server.url
    receipt_factory(token="rcpt_othersale_aaaaaa", short_code="OTHER1", items=[
        {"name": "Chapman", "quantity": 1, "unit_price": 130000, "total_price": 130000},
    ])  # fmt: skip
    sale = receipt_factory(
        transaction_date=timezone.now().isoformat(),
        customer_phone=PHONE_NUMBER,
        payment_details={"card_brand": "visa", "card_last4": "4242"},
    )
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Delivery.objects.filter(receipt=sale).update(
        status="sent", created_at=an_hour_ago, report="failed", report_reason="Absent subscriber",
        reported_at=an_hour_ago, provider="twilio",
    )  # fmt: skip
    Report.objects.create(
        merchant=merchant, receipt=sale, document="invoice", irn="K7P2QX-94ND90NR-20261122",
        state="refused", message="Invalid TIN for supplier",
    )  # fmt: skip
    name = size["width"]
    context = browser.new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill("not-used-in-tests")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Latest sales")).to_be_visible()
        _fits(page, size)
        if size is PHONE:  # the header and the task bar in one short band: a fifth of the screen at most
            assert page.locator("nav.tasks").evaluate("nav => nav.getBoundingClientRect().bottom") <= 740 / 5
            assert (
                page.locator("nav.tasks li").evaluate_all(
                    "items => new Set(items.map(item => item.getBoundingClientRect().top)).size"
                )
                == 1
            )
        page.screenshot(path=artifacts / f"dashboard-today-{name}.png", full_page=True)

        for typed, why in (("jollof", "item: Jollof rice"), ("4242", "card •••• 4242")):
            page.goto(f"{live_server.url}/admin/")
            page.get_by_role("searchbox", name="Find a sale").fill(typed)
            page.get_by_role("searchbox", name="Find a sale").press("Enter")
            row = page.locator("#result_list tbody tr", has_text="K7P2QX")
            expect(row.locator(".field-matched")).to_have_text(why)
            expect(page.locator("#result_list tbody tr")).to_have_count(1)
            _fits(page, size)
            page.screenshot(path=artifacts / f"dashboard-found-{typed}-{name}.png", full_page=True)

        row.get_by_role("link", name="K7P2QX").click()
        staff = page.locator(".sale-staff")
        expect(staff).to_contain_text("the provider reports Not delivered: Absent subscriber")
        expect(staff).to_contain_text("Refused by NRS: Invalid TIN for supplier")
        expect(page.get_by_role("link", name="Print")).to_have_attribute("href", f"/app/receipt/{sale.token}")
        _fits(page, size)
        page.get_by_role("button", name="Send again").click()
        expect(page.locator(".messagelist")).to_have_text("Sent again to +234*******89 (Text message).")
        _fits(page, size)
        page.screenshot(path=artifacts / f"dashboard-sent-again-{name}.png", full_page=True)
        assert Delivery.objects.filter(receipt=sale).count() == 2
    finally:
        context.close()


def test_find_a_sale_puts_the_cursor_in_the_box(phone, live_server, owner, merchant):
    page = phone.page
    page.goto(f"{live_server.url}/admin/login/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"{live_server.url}/admin/receipts/receipt/?find=1")
    expect(page.get_by_label("Search")).to_be_focused()
