"""The API reference page (/api/reference/) in a real headless Chromium, phone-sized."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_reference_reads_on_a_phone(phone, live_server, artifacts):
    page = phone.page
    response = page.goto(f"{live_server.url}/api/reference/")
    assert response.status == 200
    expect(page.get_by_role("heading", level=1)).to_have_text("Receco API 1.0.0")
    page.screenshot(path=artifacts / "api-reference-360x740.png")
    procedures = page.get_by_role("navigation", name="Procedures")
    procedures.get_by_role("link", name="createReceiptFromPOS").click()
    expect(page.get_by_role("heading", name="POST createReceiptFromPOS")).to_be_in_viewport()
    page.screenshot(path=artifacts / "api-reference-create-360x740.png")
    procedures.get_by_role("link", name="Errors and statuses").click()
    expect(page.get_by_role("heading", name="Errors and statuses")).to_be_in_viewport()
    page.screenshot(path=artifacts / "api-reference-errors-360x740.png")
    # Nothing wider than the screen: no sideways scrolling of the page (code blocks scroll on their own).
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert phone.console == []
    assert phone.external == []
