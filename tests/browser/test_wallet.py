"""The wallet buttons in a real headless Chromium at phone size: accessible, in reach of a
thumb, and what they lead to is a pass that verifies."""

import zipfile

import jwt
import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE
from tests.receipts.wallet.support import openssl_verify

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_buttons_at_phone_size(phone, live_server, receipt_factory, wallets, artifacts):
    receipt = receipt_factory(merchant_logo="https://cdn.example.com/mama-put.png")
    page = phone.page
    page.goto(receipt.public_url)
    apple, google = (page.get_by_role("link", name=f"Add to {name} Wallet") for name in ("Apple", "Google"))
    expect(apple).to_be_visible()
    expect(google).to_be_visible()
    for button in (apple, google):
        box = button.bounding_box()
        assert box["height"] >= 44
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    audit = Audit(page, PHONE, artifacts)
    audit.check("receipt-wallet")
    audit.assert_clean()
    page.locator("#send").screenshot(path=artifacts / "receipt-wallet-buttons-360x740.png")
    page.locator(".wallet").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "receipt-wallet-360x740.png")


def test_the_apple_button_downloads_a_pass_openssl_verifies(phone, live_server, receipt_factory, wallets, tmp_path):
    chain, _ = wallets
    receipt = receipt_factory()
    page = phone.page
    page.goto(receipt.public_url)
    with page.expect_download() as download:
        page.get_by_role("link", name="Add to Apple Wallet").click()
    assert download.value.suggested_filename == "receipt-K7P2QX.pkpass"
    download.value.save_as(tmp_path / "receipt.pkpass")
    with zipfile.ZipFile(tmp_path / "receipt.pkpass") as archive:
        archive.extractall(tmp_path / "pass")
    result = openssl_verify(
        tmp_path / "pass" / "signature", tmp_path / "pass" / "manifest.json", chain.path("root.pem")
    )
    assert result.returncode == 0, result.stderr


def test_the_google_button_opens_the_save_link(phone, live_server, receipt_factory, wallets):
    _, key = wallets
    receipt = receipt_factory()
    page = phone.page
    page.goto(receipt.public_url)
    with page.expect_request(lambda request: request.url.startswith("https://pay.google.com/")) as request:
        page.get_by_role("link", name="Add to Google Wallet").click()
    token = request.value.url.removeprefix("https://pay.google.com/gp/v/save/")
    claims = jwt.decode(token, key.public_key(), algorithms=["RS256"], audience="google")
    assert claims["origins"] == [live_server.url]
    assert claims["payload"]["genericObjects"][0]["cardTitle"]["defaultValue"]["value"] == "Mama Put Kitchen"


def test_too_many_passes_are_explained_beside_the_buttons(
    phone, live_server, receipt_factory, wallets, settings, artifacts
):
    settings.RECECO_WALLET_PASS_RATE = "1/h"
    receipt = receipt_factory()
    page = phone.page
    page.goto(receipt.public_url)
    with page.expect_download():
        page.get_by_role("link", name="Add to Apple Wallet").click()
    response = page.goto(f"{receipt.public_url}/wallet/receipt.pkpass")
    assert response.status == 429
    refusal = page.get_by_role("alert")
    expect(refusal).to_have_text(
        "Too many wallet passes asked for from your network: at most 1 per hour. Wait a while, then try again."
    )
    expect(refusal).to_be_focused()
    audit = Audit(page, PHONE, artifacts)
    audit.check("receipt-wallet-refused")
    audit.assert_clean()
