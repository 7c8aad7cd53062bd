"""The customer pages in a real headless Chromium, phone-sized."""

import io
import re
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import expect

from receco.lib.qr import qr_png
from tests.browser.conftest import CHROMIUM_ARGS, PHONE

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receipt(receipt_factory):
    return receipt_factory(
        total_amount=161250,
        items=[
            {"name": "Jollof rice (plate)", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
            {"name": "Bottled water 75cl", "quantity": 3, "unit_price": 5000, "total_price": 15000},
        ],
        merchant_logo="https://cdn.example.com/mama-put.png",
    )


def _no_complaints(phone):
    """Nothing blocked by the policy, no script errors, nothing fetched from elsewhere but the logo."""
    assert [line for line in phone.console if "error" in line.lower() or "refused" in line.lower()] == []
    assert set(phone.external) <= {"https://cdn.example.com/mama-put.png"}


def test_typing_a_code_opens_the_receipt(phone, live_server, receipt):
    page = phone.page
    page.goto(f"{live_server.url}/app/scan")
    page.get_by_label("Receipt code").fill("  k7p2qx ")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/app/receipt/{receipt.token}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Receipt: Mama Put Kitchen")
    expect(page.locator(".total-big")).to_have_text("₦1,612.50")
    expect(page.get_by_role("row", name=re.compile("Chapman"))).to_contain_text("1 × ₦300.00")
    _no_complaints(phone)


@pytest.mark.parametrize("typed", ["k7p 2qx", "K7P-2QX"])
def test_a_code_typed_with_spaces_or_a_dash_opens_the_receipt(phone, live_server, receipt, artifacts, typed):
    page = phone.page
    page.goto(f"{live_server.url}/app/scan")
    page.get_by_label("Receipt code").fill(typed)
    expect(page.locator("#code-hint")).to_have_text("Letters and digits, any case; spaces and dashes are ignored.")
    if "-" in typed:
        page.screenshot(path=artifacts / "scan-typed-dash-360x740.png")
    page.get_by_role("button", name="Open").click()
    page.wait_for_url(f"{live_server.url}/app/receipt/{receipt.token}")
    _no_complaints(phone)


def test_an_unknown_code_is_explained_on_the_same_page(phone, live_server, receipt):
    page = phone.page
    page.goto(f"{live_server.url}/app/scan")
    page.get_by_label("Receipt code").fill("ZZZZZZ")
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_role("alert")).to_have_text(
        "No receipt has that code. Check it against your slip; if you have just paid, "
        "the shop may still be sending it: try again in a few minutes."
    )
    expect(page.get_by_label("Receipt code")).to_be_focused()
    assert page.url.startswith(f"{live_server.url}/app/scan?code=ZZZZZZ")


def test_asking_for_the_receipt_by_email(phone, live_server, receipt, mailoutbox, artifacts):
    page = phone.page
    page.goto(receipt.public_url)
    page.get_by_label("Email address").fill("ada.customer@example.com")
    page.get_by_role("button", name="Send my receipt").click()
    expect(page.get_by_role("status").first).to_have_text("Your receipt is on its way to a*******@example.com.")
    assert "ada.customer@example.com" not in page.content()
    page.locator("#send").screenshot(path=artifacts / "receipt-sent-360x740.png")
    [email] = mailoutbox
    assert email.to == ["ada.customer@example.com"]
    assert email.subject == "Your receipt from Mama Put Kitchen: ₦1,612.50"
    assert receipt.message_url in email.body
    assert receipt.message_url in email.alternatives[0][0]
    _no_complaints(phone)


def test_a_bad_address_is_explained_next_to_the_field(phone, live_server, receipt, mailoutbox):
    page = phone.page
    page.goto(receipt.public_url)
    page.get_by_label("Email address").fill("ada@")
    page.get_by_label("Email address").press("Enter")
    expect(page.locator("#email-error")).to_have_text("Enter a valid email address, like name@example.com.")
    expect(page.get_by_label("Email address")).to_have_attribute("aria-invalid", "true")
    assert mailoutbox == []


def _decode_in_page(page, image_url: str) -> str | None:
    """Decode the QR code at ``image_url`` with the jsQR the site serves, in the page."""
    return page.evaluate(
        """async ([decoder, imageUrl]) => {
            if (!window.jsQR) {
                await new Promise((resolve, reject) => {
                    const script = document.createElement("script");
                    script.src = decoder; script.onload = resolve; script.onerror = reject;
                    document.head.appendChild(script);
                });
            }
            const image = new Image();
            image.src = imageUrl;
            await image.decode();
            const size = 400;
            const canvas = document.createElement("canvas");
            canvas.width = canvas.height = size;
            const context = canvas.getContext("2d");
            context.imageSmoothingEnabled = false;
            context.drawImage(image, 0, 0, size, size);
            const pixels = context.getImageData(0, 0, size, size);
            const found = window.jsQR(pixels.data, size, size);
            return found ? found.data : null;
        }""",
        ["/static/vendor/jsqr/jsQR.js", image_url],
    )


def test_the_qr_images_decode_to_the_page_address(phone, live_server, receipt):
    page = phone.page
    page.goto(receipt.public_url)
    assert _decode_in_page(page, f"/app/receipt/{receipt.token}/qr.png") == page.url
    assert _decode_in_page(page, f"/app/receipt/{receipt.token}/qr.svg") == page.url
    # The code drawn in the page itself, as a customer would scan it from another phone.
    inline = page.locator("figure.qr svg").evaluate(
        "svg => 'data:image/svg+xml;base64,' + btoa(new XMLSerializer().serializeToString(svg))"
    )
    assert _decode_in_page(page, inline) == page.url
    _no_complaints(phone)


def _write_y4m(png: bytes, path: Path, width: int = 640, height: int = 480) -> None:
    """A short Y4M video of the QR code on a grey desk: Chromium's fake camera plays it."""
    frame = Image.new("RGB", (width, height), (150, 150, 150))
    code = Image.open(io.BytesIO(png)).convert("RGB").resize((360, 360), Image.NEAREST)
    frame.paste(code, ((width - 360) // 2, (height - 360) // 2))
    y, cb, cr = frame.convert("YCbCr").split()
    half = (width // 2, height // 2)
    data = y.tobytes() + cb.resize(half).tobytes() + cr.resize(half).tobytes()
    with path.open("wb") as video:
        video.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(10):
            video.write(b"FRAME\n" + data)


@pytest.mark.parametrize("holds", ["link", "short code"])
def test_scanning_the_qr_with_the_camera_opens_the_receipt(
    playwright_instance, chromium_executable, live_server, receipt, settings, tmp_path, holds
):
    """The till's QR code holds the receipt's link, or (some tills print their own) only
    its short code, which the scan page looks up as if it had been typed."""
    settings.RECECO_WEB_URL = live_server.url
    video = tmp_path / "qr.y4m"
    _write_y4m(qr_png(receipt.public_url if holds == "link" else receipt.short_code.lower()), video)
    browser = playwright_instance.chromium.launch(
        executable_path=chromium_executable,
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
        ],
    )
    try:
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, permissions=["camera"])
        page = context.new_page()
        fetched = []
        page.on("request", lambda request: fetched.append(request.url))
        page.goto(f"{live_server.url}/app/scan")
        native = page.evaluate("'BarcodeDetector' in window")
        page.get_by_role("button", name="Scan the QR code").click()
        page.wait_for_url(receipt.public_url, timeout=15000)
        expect(page.get_by_role("heading", level=1)).to_have_text("Receipt: Mama Put Kitchen")
        # Desktop Linux Chromium has no BarcodeDetector: the vendored jsQR read the code.
        assert native or f"{live_server.url}/static/vendor/jsqr/jsQR.js" in fetched
    finally:
        browser.close()


def test_the_print_button_and_print_stylesheet(phone, live_server, receipt, artifacts):
    page = phone.page
    page.goto(receipt.public_url)
    expect(page.get_by_role("button", name="Print / save as PDF")).to_be_visible()
    page.emulate_media(media="print")
    expect(page.locator(".actions")).to_be_hidden()
    expect(page.locator(".site-footer")).to_be_hidden()
    expect(page.locator(".receipt")).to_be_visible()
    page.pdf(path=artifacts / "receipt.pdf", format="A4")
    assert (artifacts / "receipt.pdf").read_bytes().startswith(b"%PDF-")


def test_the_page_fits_a_phone_and_is_keyboard_friendly(phone, live_server, receipt):
    page = phone.page
    page.goto(receipt.public_url)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # The scan address breaks before "/app/scan", never inside it.
    expect(page.locator(".scan-link")).to_have_text(f"{live_server.url.split('://')[1]}/app/scan")
    assert page.locator(".scan-path").evaluate("el => el.getClientRects().length") == 1
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.get_by_label("Email address").focus()
    outline = page.get_by_label("Email address").evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline != "none"


def test_a_test_receipt_shows_its_banner(phone, live_server, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    test_receipt = create_receipt(merchant, validate_sale(sale), livemode=False).receipt
    page = phone.page
    page.goto(test_receipt.public_url)
    expect(page.get_by_role("note")).to_contain_text("Test receipt")


def test_phone_screenshots(phone, live_server, receipt, artifacts):
    """Artefacts for a human to look at: the receipt and the scan page at 360x740."""
    page = phone.page
    page.goto(receipt.public_url)
    expect(page.locator("img.logo")).to_be_visible()
    page.screenshot(path=artifacts / "receipt-360x740.png", full_page=True)
    page.screenshot(path=artifacts / "receipt-360x740-first-screen.png")
    page.goto(f"{live_server.url}/app/scan")
    page.screenshot(path=artifacts / "scan-360x740.png")
    image = Image.open(artifacts / "receipt-360x740.png")
    assert image.width == PHONE["width"] * 2
    _no_complaints(phone)


def test_a_daily_limit_is_explained_next_to_the_field(phone, live_server, receipt, receipt_factory, artifacts):
    from receipts.writer import update_contact as attach_contact

    for n in range(3):  # three receipts already sent to this number today at customers' requests
        attach_contact(
            receipt_factory(token=f"rcpt_earlier{n:02d}_aaaaaa", short_code=f"EARLY{n}"), None, "+2348031234589"
        )
    page = phone.page
    page.goto(receipt.public_url)
    page.get_by_label("Mobile number").fill("0803 123 4589")
    page.get_by_role("button", name="Send my receipt").click()
    expect(page.locator("#phone-error")).to_have_text(
        "This number has been sent as many receipts as we can send it today. Try again tomorrow."
    )
    page.locator("#send").screenshot(path=artifacts / "receipt-limit-360x740.png")
    assert phone.console == [
        "error: Failed to load resource: the server responded with a status of 429 (Too Many Requests)"
    ]


def test_too_many_codes_tried_says_so(phone, live_server, receipt, settings, artifacts):
    # An hour, not a minute: two look-ups must not straddle the window's edge.
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/h"
    page = phone.page
    page.goto(f"{live_server.url}/app/receipt/ZZZZZ1")
    response = page.goto(f"{live_server.url}/app/receipt/ZZZZZ2")
    assert response.status == 429
    expect(page.get_by_role("heading", level=1)).to_have_text("Too many tries")
    page.screenshot(path=artifacts / "too-many-tries-360x740.png")
    page.goto(receipt.public_url)  # the QR code's link still opens
    expect(page.locator("#merchant-name")).to_have_text("Mama Put Kitchen")


def test_the_whole_receipt_at_phone_size(phone, live_server, merchant, receipt_factory, artifacts):
    """A VAT sale with the shop's legal identity; partly refunded; its refund; a voided sale."""
    from receipts.refunds import refund, validate_refund, void

    merchant.legal_name, merchant.address = "Mama Put Foods Ltd", "12 Admiralty Way\nLekki Phase 1, Lagos"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.phone, merchant.support_email = "+234 803 123 4589", "help@mamaput.example.com"
    merchant.return_policy, merchant.receipt_footer = "Unopened drinks within 7 days.", "Thank you for eating with us!"
    merchant.save()
    sale = receipt_factory(
        subtotal_amount=130000,
        discount_amount=10000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120000, "tax_amount": 9000, "inclusive": False}],
        tip_amount=5000,
        total_amount=134000,
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    )
    made = refund(sale, validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}],
                                          "reason": "Warm drink"}), keyed=True).receipt  # fmt: skip
    voided = receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01")
    void(voided, "Rung up twice", keyed=True)
    page = phone.page
    for name, receipt in (("sale-vat-refunded", sale), ("refund", made), ("voided", voided)):
        page.goto(receipt.public_url)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
        page.screenshot(path=artifacts / f"receipt-{name}-360x740.png", full_page=True)
    _no_complaints(phone)


def test_a_screen_reader_user_lands_on_the_error_then_on_the_confirmation(phone, live_server, receipt, mailoutbox):
    page = phone.page
    page.goto(receipt.public_url)
    page.get_by_label("Email address").fill("ada@")
    page.get_by_role("button", name="Send my receipt").click()
    page.wait_for_url(f"{receipt.public_url}/send")
    field = page.get_by_label("Email address")
    expect(field).to_be_focused()
    expect(field).to_have_accessible_description("Enter a valid email address, like name@example.com.")
    field.fill("ada.customer@example.com")
    field.press("Enter")
    page.wait_for_url(f"{receipt.public_url}#sent")
    expect(page.get_by_role("status").first).to_be_focused()
    expect(page.get_by_role("status").first).to_have_text("Your receipt is on its way to a*******@example.com.")
    expect(page.get_by_role("listitem").filter(has_text="Email to a*******@example.com")).to_be_visible()


def test_a_receipt_that_arrives_later_opens_by_itself(phone, live_server, merchant, receipt_factory, monkeypatch):
    from customers.views import receipts as views

    monkeypatch.setattr(views, "PENDING_RETRY_SECONDS", 1)
    page = phone.page
    page.goto(f"{live_server.url}/app/receipt/rcpt_later001_aaaaaa")
    expect(page.get_by_role("heading", level=1)).to_have_text("We can’t find that receipt yet")
    expect(page.get_by_role("status")).to_contain_text("This page looks for it again every 1 seconds")
    expect(page.get_by_role("link", name="Look again now")).to_be_visible()
    receipt_factory(token="rcpt_later001_aaaaaa", short_code="LATER1")
    expect(page.get_by_role("heading", level=1)).to_have_text("Receipt: Mama Put Kitchen", timeout=10000)
    assert page.locator('meta[http-equiv="refresh"]').count() == 0


# What is read at a glance stays whole on a phone, on a laptop and on paper: the receipt's
# number, the card, and each clock time with its zone (customers/templatetags/unbroken.py).
SIZES = [pytest.param(PHONE, id="360x740"), pytest.param({"width": 1280, "height": 800}, id="1280x800")]
# Each kept piece: its text and how many lines its boxes take (one, unless it wrapped).
KEPT_LINES = """() => [...document.querySelectorAll('.receipt .keep')].map(el => {
    const tops = new Set([...el.getClientRects()].map(rect => Math.round(rect.top)));
    return [el.textContent, tops.size];
})"""


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("prefix", ["DEMOSH", "DEMOSHOPXY"])
def test_no_number_time_or_card_is_split_across_lines(
    browser, live_server, settings, merchant, receipt_factory, artifacts, size, prefix
):
    settings.RECECO_WEB_URL = live_server.url
    merchant.receipt_prefix = prefix
    merchant.save()
    sale = receipt_factory(
        transaction_date="2026-11-22T17:02:00Z",
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        location="Plot 1415 Adetokunbo Ademola Street, Victoria Island, Lagos",
    )
    phone = size["width"] < 600
    context = browser.new_context(viewport=size, device_scale_factor=2 if phone else 1, is_mobile=phone)
    page = context.new_page()
    try:
        page.goto(sale.public_url)
        for media in ("screen", "print"):
            page.emulate_media(media=media)
            kept = page.evaluate(KEPT_LINES)
            texts = [text for text, _ in kept]
            assert texts == ["18:02 WAT", sale.receipt_number, "18:02 WAT", "Visa •••• 4242"], (media, texts)
            assert [lines for _, lines in kept] == [1, 1, 1, 1], (media, kept)
            assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], media
        page.emulate_media(media="screen")
        page.screenshot(
            path=artifacts / f"receipt-unbroken-{prefix}-{size['width']}x{size['height']}.png", full_page=True
        )
    finally:
        context.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_gift_receipt_from_the_receipt_page(browser, live_server, settings, merchant, receipt, artifacts, size):
    settings.RECECO_WEB_URL = live_server.url
    merchant.return_policy = "Unopened drinks within 7 days."
    merchant.save()
    phone = size["width"] < 600
    context = browser.new_context(viewport=size, device_scale_factor=2 if phone else 1, is_mobile=phone)
    page = context.new_page()
    try:
        page.goto(receipt.public_url)
        page.get_by_role("button", name="Gift receipt").click()
        page.wait_for_url(re.compile(rf"{live_server.url}/app/gift/[A-Za-z0-9_-]{{24}}$"))
        expect(page.get_by_role("heading", level=1)).to_have_text("Gift receipt: Mama Put Kitchen")
        expect(page.get_by_role("table", name="Items")).to_contain_text("Jollof rice (plate)")
        expect(page.get_by_text("Returns: Unopened drinks within 7 days.")).to_be_visible()
        expect(page.get_by_role("button", name="Print / save as PDF")).to_be_visible()
        shown = page.locator("body").inner_text()
        for hidden in ("₦", "1,612.50", receipt.short_code):
            assert hidden not in shown, hidden
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        page.screenshot(path=artifacts / f"gift-receipt-{size['width']}x{size['height']}.png", full_page=True)
    finally:
        context.close()
