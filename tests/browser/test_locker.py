"""The customer's receipt locker in a real headless Chromium at 360x740: two shops sent
receipts to one number; the customer signs in with the texted code and finds both.
Every page is checked by axe-core and kept as a screenshot in test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from receipts.models import Receipt
from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE
from tests.browser.locker import NUMBER, ask_for_a_code, enter_the_code, texted_code

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit(phone, artifacts):
    return Audit(phone.page, PHONE, artifacts)


@pytest.fixture
def two_shops(merchant, other_merchant, sale):
    from receipts.creation import create_receipt
    from receipts.refunds import refund, validate_refund
    from receipts.validation import validate_sale

    def make(shop, **overrides):
        data = {**sale, "merchant_string_id": shop.string_id, "merchant_name": shop.name, **overrides}
        return create_receipt(shop, validate_sale(data), keyed=True).receipt

    mama = make(merchant, token="rcpt_mama0001_aaaaaa", short_code="MAMA01", customer_phone=NUMBER,
                transaction_date="2026-11-20T12:00:00Z")  # fmt: skip
    refund(mama, validate_refund({"token": mama.token, "amount": 30000}), keyed=True)
    corner = make(other_merchant, token="rcpt_corner01_aaaaaa", short_code="CORN01", customer_phone=NUMBER,
                  total_amount=45050, transaction_date="2026-11-22T09:30:00Z",
                  items=[{"name": "Bread", "quantity": 1, "unit_price": 45050, "total_price": 45050}])  # fmt: skip
    make(merchant, token="rcpt_others01_aaaaaa", short_code="OTHR01", customer_phone="+2348039999999")
    return mama, corner


def test_signing_in_by_text_message_shows_both_shops_receipts(audit, phone, live_server, two_shops):
    mama, corner = two_shops
    page, url = audit.page, live_server.url

    audit.visit(f"{url}/app/my", "locker-signin")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your receipts")
    ask_for_a_code(page, url)
    expect(page.get_by_text("If a shop sent a receipt to +234*******67")).to_be_visible()
    audit.check("locker-code")
    code = texted_code()

    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    enter_the_code(page, wrong)
    expect(page.get_by_role("alert")).to_have_text("That code is not right. 4 tries left.")
    expect(page.get_by_label("Code")).to_be_focused()
    audit.check("locker-code-wrong")

    enter_the_code(page, code)
    page.wait_for_url(f"{url}/app/my")
    entries = page.locator(".locker-list > li")
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_contain_text("Corner Shop")
    expect(entries.nth(0)).to_contain_text("₦450.50")
    expect(entries.nth(1)).to_contain_text("Mama Put Kitchen")
    expect(entries.nth(1).get_by_role("link", name="Refund of ₦300.00")).to_be_visible()
    assert "rcpt_others01" not in page.content()
    # One count of the receipts, refunds included, here and on the erase page.
    expect(page.get_by_role("heading", name="3 receipts")).to_be_visible()
    # The date filter whole at 360 px: its date and its calendar button inside the field,
    # the field inside the form (below the amount's when both do not fit side by side).
    fit = page.evaluate("""() => {
        const day = document.getElementById('day'), form = day.closest('form').getBoundingClientRect();
        const box = day.getBoundingClientRect();
        return {inside: box.left >= form.left && box.right <= form.right + 0.5, width: box.width,
                scrolls: day.scrollWidth > day.clientWidth};
    }""")
    assert fit["inside"], fit
    assert not fit["scrolls"], fit
    assert fit["width"] >= 160, fit  # "dd/mm/yyyy" and the calendar button, at the page's font size
    audit.check("locker-list")

    page.get_by_label("Shop").fill("corner")
    page.get_by_role("button", name="Search").click()
    expect(entries).to_have_count(1)
    expect(page.get_by_role("heading", name="1 found")).to_be_visible()
    audit.check("locker-search")

    entries.first.get_by_role("link").first.click()
    page.wait_for_url(f"{url}/app/receipt/{corner.token}")
    page.go_back()

    page.goto(f"{url}/app/my")
    page.get_by_role("link", name="Erase my number from all receipts").click()
    page.wait_for_url(f"{url}/app/my/erase")
    expect(page.get_by_role("heading", level=1)).to_have_text("Erase your number from all receipts")
    expect(page.get_by_text("from all 3 receipts shops sent to it")).to_be_visible()
    audit.check("locker-erase")
    page.get_by_role("link", name="Keep it").click()
    page.wait_for_url(f"{url}/app/my")
    page.get_by_role("button", name="Sign out everywhere").click()
    expect(page.get_by_role("status")).to_have_text("You are signed out on every device.")
    expect(page.get_by_label("Mobile number or email address")).to_be_visible()
    audit.check("locker-signed-out")
    audit.assert_clean()
    # Nothing refused by the page's policy, no script error; the wrong code's 400 is expected.
    complaints = [line for line in phone.console if "error" in line.lower() or "refused" in line.lower()]
    assert [line for line in complaints if "status of 400" not in line] == []


def test_the_email_pages(audit, live_server, merchant, sale, mailoutbox):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    create_receipt(merchant, validate_sale({**sale, "customer_email": "ada.obi@example.com"}), keyed=True)

    page, url = audit.page, live_server.url
    page.goto(f"{url}/app/my")
    page.get_by_label("Mobile number or email address").fill("0803")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#contact-error")).to_contain_text("Enter a valid mobile number")
    expect(page.get_by_label("Mobile number or email address")).to_have_attribute("aria-invalid", "true")
    audit.check("locker-signin-error")
    page.get_by_label("Mobile number or email address").fill("ada.obi@example.com")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(f"{url}/app/my/email-sent")
    audit.check("locker-email-sent")
    [email] = [message for message in mailoutbox if message.subject == "Sign in to your receipts"]
    link = re.search(r"(/app/my/link/\S+)", email.body)[1]
    audit.visit(f"{url}{link}", "locker-link")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/app/my")
    expect(page.locator(".locker-list > li")).to_have_count(1)
    page.get_by_role("link", name="Erase my email from all receipts").click()
    page.get_by_role("button", name="Erase my email").click()
    page.wait_for_url(f"{url}/app/my")
    expect(page.get_by_role("status")).to_have_text(
        "a*******@example.com is erased from all your receipts. You are signed out on every device."
    )
    audit.check("locker-erased")
    assert not Receipt.objects.filter(customer_email__isnull=False).exists()
    audit.visit(f"{url}{link}", "locker-link-used")
    expect(page.get_by_role("alert")).to_have_text(
        "This sign-in link has expired or was already used. Ask for a new one."
    )
    audit.assert_clean()


def test_a_retired_code_and_a_spent_texts_budget(audit, live_server, two_shops, settings):
    """Asked again on another device, the first code is retired: typed, it is refused as a
    spent one. Once the service's texts are spent, the sign-in form says so."""
    from django.test import Client

    page, url = audit.page, live_server.url
    page.goto(f"{url}/app/my")
    ask_for_a_code(page, url)
    first = texted_code()
    assert Client().post("/app/my/start", {"contact": NUMBER}).status_code == 302  # the laptop asks too
    enter_the_code(page, first)
    expect(page.get_by_role("alert")).to_have_text("This code has expired or was already used. Ask for a new code.")
    expect(page.get_by_text("Type the 6-digit code from the text message.")).to_be_visible()
    audit.check("locker-code-retired")

    settings.RECECO_LOCKER_TEXT_RATE = ["2/h"]  # two texts sent already
    page.goto(f"{url}/app/my")
    page.get_by_label("Mobile number or email address").fill(NUMBER)
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#contact-error")).to_have_text(
        "Too many sign-in codes sent by text just now: at most 2 per hour, for everyone. "
        "Sign in with your email address, or wait a while, then try again."
    )
    audit.check("locker-signin-texts-spent")
    audit.assert_clean()
