"""The merchant dashboard's own pages in a real headless Chromium, phone-sized."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_locked_out_sign_in_says_why_and_for_how_long(phone, live_server, owner, artifacts):
    page = phone.page
    for n in range(5):
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill(f"wrong guess {n}")
        page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Too many sign-in attempts")).to_be_visible()
    expect(page.get_by_text("Wait 15 minutes before you try again")).to_be_visible()
    page.screenshot(path=artifacts / "dashboard-locked-out-360x740.png")
