"""The merchant dashboard's own pages in a real headless Chromium, phone-sized."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PHONE

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_locked_out_sign_in_says_why_and_for_how_long(phone, live_server, owner, artifacts):
    page = phone.page
    for n in range(5):
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill(f"wrong guess {n}")
        page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Too many sign-in attempts")).to_be_visible()
    expect(page.get_by_text("Wait 15 minutes before you try again")).to_be_visible()
    page.screenshot(path=artifacts / "dashboard-locked-out-360x740.png")


def test_a_shop_owner_on_a_phone_makes_and_copies_a_key(browser, live_server, owner, merchant, artifacts):
    context = browser.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True,
        permissions=["clipboard-read", "clipboard-write"],
    )  # fmt: skip
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill("not-used-in-tests")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name=re.compile(r"^Mama Put Kitchen: .* \(WAT\)$"))).to_be_visible()
        page.get_by_role("link", name="API keys").first.click()
        page.get_by_role("link", name="Create a key").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Create a key")
        page.get_by_label("Live: for real sales; customers get the receipts it makes.").check()
        page.get_by_label("Name").fill("Till 2")
        page.get_by_role("button", name="Create the key", exact=True).click()
        key = page.get_by_label("Live key for Mama Put Kitchen").input_value()
        assert key.startswith("poslive_")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.screenshot(path=artifacts / "dashboard-key-shown-first-screen-360x740.png")
        page.get_by_role("button", name="Copy the key").click()
        expect(page.get_by_role("status")).to_have_text("Copied.")
        assert page.evaluate("navigator.clipboard.readText()") == key
    finally:
        context.close()


@pytest.mark.parametrize("size", [PHONE, {"width": 1280, "height": 800}], ids=["360x740", "1280x800"])
def test_the_key_list_needs_no_sideways_scrolling(browser, live_server, owner, merchant, live_key, size, artifacts):
    from merchants.keys import issue_key, rotate_key

    rotate_key(issue_key(merchant, "test", "Back-office laptop with a long name").api_key)
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill("not-used-in-tests")
        page.get_by_role("button", name="Sign in").click()
        page.goto(f"{live_server.url}/admin/merchants/apikey/")
        results = page.locator("#changelist .results")
        assert results.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        first = page.locator("#result_list tbody tr").first
        for text in ["Test", "Active", "Never"]:
            expect(first).to_contain_text(text)
        if size is PHONE:
            expect(first.locator(".field-state_label")).to_be_visible()
            assert first.locator(".field-type").evaluate("el => getComputedStyle(el, '::before').content") == '"Type: "'
            page.screenshot(path=artifacts / "dashboard-keys-stacked-360x740.png", full_page=True)
        else:
            page.screenshot(path=artifacts / "dashboard-keys-1280x800.png")
    finally:
        context.close()


@pytest.mark.parametrize("size", [PHONE, {"width": 1280, "height": 800}], ids=["360x740", "1280x800"])
def test_the_usage_charts_are_readable_and_have_their_numbers_as_text(
    browser, live_server, owner, merchant, receipt_factory, size, artifacts
):
    from django.utils import timezone

    receipt_factory(transaction_date=timezone.now().isoformat())
    context = browser.new_context(viewport=size)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/admin/login/")
        page.get_by_label("Username").fill(owner.username)
        page.get_by_label("Password").fill("not-used-in-tests")
        page.get_by_role("button", name="Sign in").click()
        page.goto(f"{live_server.url}/admin/merchants/merchant/{merchant.pk}/usage/")
        smallest = page.evaluate(
            """() => Math.min(...[...document.querySelectorAll("svg.bar-chart text")].map(text => {
                const svg = text.ownerSVGElement;
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                return parseFloat(getComputedStyle(text).fontSize) * scale;
            }))"""
        )
        assert smallest >= 11
        page.get_by_text("Sales per day as a table").click()
        table = page.get_by_role("table", name="Sales per day, Lagos time (WAT), newest first")
        expect(table.get_by_role("row").nth(1)).to_contain_text("1")
        if size is PHONE:
            page.screenshot(path=artifacts / "dashboard-usage-table-360x740.png", full_page=True)
    finally:
        context.close()


def test_a_shop_owner_signs_in_with_a_second_factor_on_a_phone(
    phone, live_server, owner, merchant, settings, artifacts
):
    from django_otp.oath import TOTP
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from dashboard import twofactor

    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    settings.OTP_STATIC_THROTTLE_FACTOR = 0
    device = TOTPDevice.objects.create(user=owner, name="Authenticator app", confirmed=True)
    recovery = twofactor.new_recovery_codes(owner)
    page = phone.page
    page.goto(f"{live_server.url}/admin/merchants/apikey/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Sign in: step 2")).to_be_visible()
    page.wait_for_load_state("load")  # its stylesheets applied
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "dashboard-sign-in-step-2-360x740.png")
    code = str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)
    field = page.get_by_label(re.compile(r"^Code"))
    # The phone's number pad, and the code its messages app or authenticator offers.
    assert (field.get_attribute("inputmode"), field.get_attribute("autocomplete")) == ("numeric", "one-time-code")
    field.fill(code)
    page.get_by_role("button", name="Sign in", exact=True).click()
    # Straight on to the page asked for.
    expect(page.get_by_role("heading", level=1)).to_have_text("API keys")
    page.get_by_role("button", name="Sign out").click()

    # Without the phone: a recovery code, once.
    page.goto(f"{live_server.url}/admin/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("No phone? Use a recovery code (10 left)").click()
    recovery_field = page.get_by_label("Recovery code")
    assert recovery_field.get_attribute("inputmode") is None  # recovery codes have letters
    recovery_field.fill(recovery[0].upper())
    page.get_by_role("button", name="Use the recovery code").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Mama Put Kitchen: "))).to_be_visible()
    assert twofactor.recovery_codes_left(owner) == 9


def test_a_shop_owner_sets_up_two_step_sign_in_on_a_phone_with_the_emailed_link(
    phone, browser, live_server, owner, settings, mailoutbox, artifacts
):
    """Issue 32.9: the password alone sets up nothing; the link emailed to the owner, opened
    on the phone, does; the phone opens its authenticator app by an otpauth:// link."""
    from django_otp.oath import TOTP
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from dashboard import twofactor

    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    owner.email = "olu@mama-put.example"
    owner.save()
    page = phone.page
    page.goto(f"{live_server.url}/admin/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("a password alone does not set up two-step sign-in")).to_be_visible()
    expect(page.locator(".two-step-qr")).to_have_count(0)
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "dashboard-two-step-prove-360x740.png", full_page=True)
    page.get_by_role("button", name="Email me the set-up link").click()
    expect(page.get_by_text("We sent the link to o*******@mama-put.example.")).to_be_visible()

    (message,) = mailoutbox
    link = re.search(r"https?://\S+/admin/two-step/link/\?key=\S+", message.body)[0]
    page.goto(link)
    page.get_by_role("button", name="Set up my authenticator app").click()
    expect(page.get_by_role("heading", name="Set up two-step sign-in")).to_be_visible()
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    app_link = page.get_by_role("link", name="Add Receco to your authenticator app")
    expect(app_link).to_be_visible()
    device = TOTPDevice.objects.get(user=owner)
    assert app_link.get_attribute("href") == device.config_url
    assert device.config_url.startswith("otpauth://totp/Receco%3Aolu?secret=")
    field = page.get_by_label("Code from the app")
    assert (field.get_attribute("inputmode"), field.get_attribute("autocomplete")) == ("numeric", "one-time-code")
    page.screenshot(path=artifacts / "dashboard-two-step-setup-360x740.png", full_page=True)

    field.fill(str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6))
    page.get_by_role("button", name="Turn on two-step sign-in").click()
    expect(page.get_by_role("list", name="Recovery codes").locator("code")).to_have_count(10)
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.screenshot(path=artifacts / "dashboard-two-step-recovery-codes-360x740.png", full_page=True)
    page.get_by_role("link", name="I have kept them: continue").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Mama Put Kitchen: "))).to_be_visible()
    assert twofactor.enrolled(owner)

    # The link is for a phone: on a computer the QR code is what the phone beside it scans.
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        desk = context.new_page()
        TOTPDevice.objects.filter(user=owner).delete()
        twofactor.new_recovery_codes(owner)
        desk.goto(f"{live_server.url}/admin/")
        desk.get_by_label("Username").fill(owner.username)
        desk.get_by_label("Password").fill("not-used-in-tests")
        desk.get_by_role("button", name="Sign in").click()
        from dashboard import enrolment

        desk.goto(live_server.url + enrolment.link_path(enrolment.make_link(owner, enrolment.EMAIL_VALIDITY)))
        desk.get_by_role("button", name="Set up my authenticator app").click()
        expect(desk.locator(".two-step-qr svg")).to_be_visible()
        expect(desk.locator(".two-step-app-link")).to_be_hidden()
    finally:
        context.close()
