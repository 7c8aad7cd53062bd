"""/app/verify in a real headless Chromium, phone-sized: a receipt file downloaded from its
page is checked in the browser (WebCrypto Ed25519 and SHA-256, JCS, the inclusion proof,
the checkpoint's signature); each change of a stored receipt, and an edited proof, is
caught; a saved file is verified with the service stopped; a rotated key leaves old
receipts verifiable."""

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from ledger import checkpoints
from ledger.models import Node
from receco.lib import signingkeys
from receco.lib.qr import qr_png
from receipts.models import Receipt
from tests import databases
from tests.browser.accessibility import violations
from tests.browser.conftest import CHROMIUM_ARGS, PHONE, Visit
from tests.browser.test_customer_pages import _write_y4m as write_y4m
from tests.ledger.conftest import (
    append,
    other_keys,  # noqa: F401 (a fixture, asked for after the first append)
)
from tests.servers import ROOT, manage, start_gunicorn

pytestmark = pytest.mark.django_db(transaction=True)

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "verify-page"  # git ignores it
SIGNATURE_FAILED = "Failed: The signature does not match the content: the receipt was changed after it was signed."


@pytest.fixture(autouse=True)
def _fresh_checkpoint():
    """The live server reads the latest checkpoint through a one-second cache: never a
    previous test's."""
    checkpoints.forget_cached()
    yield
    checkpoints.forget_cached()


@pytest.fixture
def logged(receipt_factory):
    """Three receipts in the log, so that each has a proof of two hashes."""
    sales = [receipt_factory(token=f"rcpt_verified{i}_aaaaaa", short_code=f"VERIF{i}") for i in range(3)]
    append()
    return sales


def _download(page, receipt, folder: Path) -> Path:
    """Save the receipt's file as a customer does: its page's "Download for your records"."""
    page.goto(receipt.public_url)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download for your records").click()
    path = folder / download.value.suggested_filename
    download.value.save_as(path)
    return path


def _open(page, path: Path) -> None:
    page.get_by_label("Open a saved receipt file").set_input_files(path)


def _verdict(page):
    return page.locator(".verdict")


def _checks(page):
    """The checks made, behind "How it was checked" (open by itself when one failed)."""
    verdict = page.locator(".verdict")
    expect(verdict.locator(".verdict-title")).not_to_be_empty()
    details = verdict.locator(".checks-details")
    if not details.evaluate("el => el.open"):
        details.locator("summary").click()
    return verdict.get_by_role("list", name="What was checked")


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"{name}-360x740.png", full_page=True)


def _no_complaints(phone):
    assert [line for line in phone.console if "error" in line.lower() or "refused" in line.lower()] == []
    assert set(phone.external) <= {"https://cdn.example.com/mama-put.png"}


def test_a_downloaded_receipt_is_verified_in_the_browser(phone, live_server, logged, tmp_path, artifacts):
    page = phone.page
    path = _download(page, logged[1], tmp_path)
    assert path.name == "receipt-VERIF1.orf.json"
    page.get_by_role("link", name="Verify this receipt").click()
    page.wait_for_url(f"{live_server.url}/app/verify?reference={logged[1].token}")
    expect(page.get_by_label("Or the receipt's code or link")).to_have_value(logged[1].token)
    assert violations(page) == []
    _shot(page, "verify-empty")
    # The receipt the page was opened for is fetched and checked at once, no button pressed.
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_verdict(page).locator(".verdict-summary")).to_contain_text("This receipt is genuine")
    # Plain words first: how it was checked, in technical words, behind a disclosure.
    expect(_verdict(page).get_by_role("list", name="What was checked")).to_be_hidden()
    # Its time as the receipt's page shows it, in the shop's zone (WAT), not UTC.
    expect(_verdict(page).locator(".signed-details")).to_contain_text("Date22 Nov 2026, 11:15 WAT")
    page.goto(f"{live_server.url}/app/verify")
    expect(_verdict(page)).to_be_hidden()
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_verdict(page)).to_be_focused()
    checks = _checks(page)
    expect(checks).to_contain_text("Passed: The signature matches the receipt's content")
    expect(checks).to_contain_text("Passed: The file's fingerprint (SHA-256) and signer match its signed content.")
    expect(checks).to_contain_text(
        "Passed: The log's checkpoint in the file (3 entries) is signed by Receco's published key."
    )
    expect(checks).to_contain_text(
        "Passed: The receipt is entry 1 of the log, in its checkpoint of 3 entries: "
        "its inclusion proof leads to the checkpoint's root."
    )
    expect(_verdict(page).locator(".signed-details")).to_contain_text("Mama Put Kitchen, Lekki Phase 1")
    expect(_verdict(page).locator(".signed-details")).to_contain_text("₦1,300.00")
    expect(_verdict(page).locator(".signed-details")).to_contain_text(f"Number{logged[1].receipt_number}")
    expect(_verdict(page).locator(".signed-items")).to_contain_text("Jollof rice")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert violations(page) == []
    _shot(page, "verify-good")
    page.screenshot(path=artifacts / "verify-good-360x740.png", full_page=True)
    _no_complaints(phone)


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ("amount", {"total_amount": 129999}),
        ("item", {"items": [{"name": "Jollof rice", "quantity": 3, "unit_price": 50000, "total_price": 150000}]}),
        ("date", {"transaction_date": "2026-11-21T10:15:00Z"}),
        ("merchant", {"merchant_name": "Another Kitchen"}),
    ],
)
def test_a_stored_receipt_changed_after_it_was_logged_is_not_verified(
    phone, live_server, logged, tmp_path, change, fields
):
    Receipt.objects.filter(id=logged[0].id).update(**fields)
    page = phone.page
    path = _download(page, logged[0], tmp_path)
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
    expect(_checks(page)).to_contain_text(SIGNATURE_FAILED)
    expect(_verdict(page).locator(".signed")).to_be_hidden()  # nothing unverified is shown as the receipt
    if change == "amount":
        assert violations(page) == []
        _shot(page, "verify-bad")
    _no_complaints(phone)


def _edited(path: Path, change) -> Path:
    document = json.loads(path.read_text())
    change(document)
    edited = path.with_name("edited.orf.json")
    edited.write_text(json.dumps(document))
    return edited


def _log(document):
    return document["extensions"]["receco"]["log"]


@pytest.mark.parametrize(
    ("change", "failed"),
    [
        (
            lambda d: _log(d)["inclusion"].__setitem__(0, "A" * 43 + "="),
            "Failed: The inclusion proof does not lead to the checkpoint's root: the proof or the receipt was changed.",
        ),
        (
            lambda d: _log(d).update(leaf_index=0),
            "Failed: The inclusion proof does not lead to the checkpoint's root: the proof or the receipt was changed.",
        ),
        (
            lambda d: _log(d).update(checkpoint=_log(d)["checkpoint"].replace("\n3\n", "\n4\n")),
            "Failed: The log's checkpoint in the file is not valid: no valid signature by a published key.",
        ),
        (lambda d: d["extensions"]["receco"]["signed_content"].update(total_amount=1), SIGNATURE_FAILED),
        (
            lambda d: d["trust"].update(hash="0" * 64),
            "Failed: The file's fingerprint or signer (its trust fields) do not match its signed content.",
        ),
    ],
    ids=["proof hash", "proof index", "checkpoint", "content in the file", "trust hash"],
)
def test_an_edited_file_is_not_verified(phone, live_server, logged, tmp_path, change, failed):
    page = phone.page
    path = _edited(_download(page, logged[1], tmp_path), change)
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
    expect(_checks(page)).to_contain_text(failed)
    _no_complaints(phone)


def test_a_file_saved_before_the_log_grew_is_held_to_the_newer_checkpoint(
    phone, live_server, logged, receipt_factory, tmp_path
):
    page = phone.page
    path = _download(page, logged[0], tmp_path)
    for i in range(2):
        receipt_factory(token=f"rcpt_laterone{i}_aaaaaa", short_code=f"LATER{i}")
    append()
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_checks(page)).to_contain_text(
        "Passed: The log has grown to 5 entries since the file was saved and still holds it unchanged: "
        "consistency proof checked."
    )


def test_a_log_rewritten_after_the_file_was_saved_is_caught(phone, live_server, logged, receipt_factory, tmp_path):
    page = phone.page
    path = _download(page, logged[0], tmp_path)
    receipt_factory(token="rcpt_laterone0_aaaaaa", short_code="LATER0")
    append()
    Node.objects.update(hash=b"\x07" * 32)  # the history the log now serves proofs from is another
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
    expect(_checks(page)).to_contain_text(
        "Failed: Receco's published log of 4 entries does not extend the file's checkpoint: the log was rewritten."
    )


def test_a_file_that_is_not_a_receipt_is_explained(phone, live_server, tmp_path, merchant):
    (tmp_path / "notes.json").write_text('{"hello": "world"}')
    (tmp_path / "notes.txt").write_text("not json")
    page = phone.page
    page.goto(f"{live_server.url}/app/verify")
    _open(page, tmp_path / "notes.json")
    expect(_checks(page)).to_have_text(
        "Failed: This file is not a signed Receco receipt: it has no signature or signed content."
    )
    _open(page, tmp_path / "notes.txt")
    expect(_checks(page)).to_have_text("Failed: This file is not a receipt file: it is not JSON.")


def test_a_receipt_not_in_the_log_yet_is_signed_only(phone, live_server, receipt, tmp_path):
    page = phone.page
    path = _download(page, receipt, tmp_path)
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Signed, not in the log yet")
    checks = _checks(page)
    expect(checks).to_contain_text("Passed: The signature matches the receipt's content")
    expect(checks).to_contain_text("Not checked: It is not in the public log yet")
    assert violations(page) == []
    _shot(page, "verify-not-logged-yet")
    _no_complaints(phone)


def test_a_rotated_key_leaves_old_receipts_verifiable(phone, live_server, logged, receipt_factory, request, tmp_path):
    old_kid = signingkeys.keyring().kid
    rotated = request.getfixturevalue("other_keys")
    receipt_factory(token="rcpt_afterrot_aaaaaa", short_code="AFTER1")
    append()
    page = phone.page
    path = _download(page, logged[2], tmp_path)
    document = json.loads(path.read_text())
    assert document["trust"]["signed_by"] == old_kid
    assert _log(document)["tree_size"] == 4
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_verdict(page)).to_contain_text(f"signed by Receco's published key {old_kid}")
    assert rotated.kid != old_kid


def test_a_receipt_is_fetched_by_its_code_and_checked(phone, live_server, logged):
    page = phone.page
    page.goto(f"{live_server.url}/app/verify")
    page.get_by_label("Or the receipt's code or link").fill("verif2")
    page.get_by_role("button", name="Check").click()
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    page.get_by_label("Or the receipt's code or link").fill(logged[0].public_url)
    page.get_by_role("button", name="Check").click()
    expect(_verdict(page).locator(".signed-details")).to_contain_text("VERIF0")
    page.get_by_label("Or the receipt's code or link").fill("ZZZZZZ")
    page.get_by_role("button", name="Check").click()
    expect(_checks(page)).to_have_text("Failed: No receipt has that code or link.")


def test_a_check_answered_late_does_not_replace_the_newer_ones_verdict(phone, live_server, logged):
    """On a slow network: a code typed, then another before the first's receipt came. The
    first, answered last, is not shown over the second's verdict."""
    page = phone.page
    held = []
    page.route("**/VERIF0/receipt.orf.json", lambda route: held.append(route))
    page.goto(f"{live_server.url}/app/verify")
    page.get_by_label("Or the receipt's code or link").fill("verif0")
    page.get_by_role("button", name="Check").click()
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    page.get_by_label("Or the receipt's code or link").fill("ZZZZZZ")
    page.get_by_role("button", name="Check").click()
    expect(_checks(page)).to_have_text("Failed: No receipt has that code or link.")
    with page.expect_response("**/VERIF0/receipt.orf.json"):
        held[0].continue_()
    # The first receipt checks in well under a second (the tests above): time enough to
    # have shown it, were it shown.
    page.wait_for_timeout(2000)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
    expect(_checks(page)).to_have_text("Failed: No receipt has that code or link.")


def test_a_saved_file_is_verified_with_the_service_stopped(browser, tmp_path):
    """The service as a real process: the page loaded, the file downloaded, the server
    stopped; then the file is opened and checked with nothing to reach."""
    database = databases.fresh(tmp_path)
    keys = {"RECECO_SIGNING_KEYS": json.dumps({"keys": [signingkeys.generate_jwk()]}), "RECECO_LOG_COMMIT_LAG": "1"}
    manage(database, "createmerchant", "mama-put", "--name", "Mama Put Kitchen", "--no-require-api-key")
    server = start_gunicorn(database, tmp_path / "gunicorn.log", **keys)
    try:
        sale = {
            "merchant_string_id": "mama-put",
            "total_amount": 2500,
            "items": [{"name": "Tea", "quantity": 1, "unit_price": 2500, "total_price": 2500}],
        }
        request = urllib.request.Request(
            f"{server.url}/api/trpc/createReceiptFromPOS",
            json.dumps(sale).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            token = json.load(response)["result"]["data"]["token"]
        sold = time.monotonic()
        context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
        # The appender takes receipts older than the commit lag (1 s): the browser started meanwhile.
        time.sleep(max(0.0, sold + 1.2 - time.monotonic()))
        manage(database, "appendlog", "--once", **keys)
        visit = Visit(context, server.url)
        page = visit.page
        fetched = []
        page.on("request", lambda request: fetched.append(request.url))
        page.goto(f"{server.url}/app/verify")
        saved = _save_page_as(page, tmp_path / "saved")
        with urllib.request.urlopen(f"{server.url}/app/receipt/{token}/receipt.orf.json", timeout=10) as response:
            (tmp_path / "receipt.orf.json").write_bytes(response.read())
    finally:
        server.stop()
    with pytest.raises(urllib.error.URLError, match="Connection refused"):
        urllib.request.urlopen(f"{server.url}/app/verify", timeout=2)
    fetched.clear()
    _open(page, tmp_path / "receipt.orf.json")
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_verdict(page)).to_contain_text("entry 0 of the log, in its checkpoint of 1 entry")
    assert fetched == []  # nothing asked of anyone
    assert [line for line in visit.console if "error" in line.lower()] == []

    # The page saved before the service stopped, opened from the disk, checks the file too.
    copy = context.new_page()
    copy.on("request", lambda request: fetched.append(request.url))
    copy.goto(saved.as_uri())
    _open(copy, tmp_path / "receipt.orf.json")
    expect(_verdict(copy).get_by_role("heading", level=2)).to_have_text("Verified")
    assert all(url.startswith("file://") for url in fetched), fetched
    context.close()


def _save_page_as(page, folder: Path) -> Path:
    """What a browser's "Save page as, complete" keeps: the page's HTML, its scripts and
    stylesheet beside it, the links rewritten to them."""
    folder.mkdir()
    html = page.content()
    for asset in ("receipts/verify.js", "receipts/qrreader.js", "receipts/site.css"):
        name = asset.rpartition("/")[2]
        (folder / name).write_bytes((ROOT / "static" / asset).read_bytes())
        html = html.replace(f'"/static/{asset}"', f'"{name}"')
    assert "/static/receipts/verify.js" not in html
    (folder / "verify.html").write_text(html)
    return folder / "verify.html"


def test_scanning_the_qr_code_checks_the_receipt(
    playwright_instance, chromium_executable, live_server, logged, settings, tmp_path
):
    settings.RECECO_WEB_URL = live_server.url
    video = tmp_path / "qr.y4m"
    write_y4m(qr_png(logged[2].public_url), video)
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
        page.goto(f"{live_server.url}/app/verify")
        page.get_by_role("button", name="Scan the QR code").click()
        expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified", timeout=15000)
        expect(_verdict(page).locator(".signed-details")).to_contain_text("VERIF2")
        expect(page.locator(".viewfinder")).to_be_hidden()  # the camera is stopped once read
    finally:
        browser.close()


# --- The third hostile review: a saved file whose total was changed said "Verified"; a test
# merchant's receipt under any shop name was called genuine. ------------------------------

# Each field the signed content states, changed in the file, and what the page names.
FIELD_EDITS = [
    (lambda d: d.update(total=1301.0), "Failed: The file's total is 1301, the signed content says 1300: "
     "the file was changed after it was signed."),
    (lambda d: d.update(currency="USD"), "Failed: The file's currency is \"USD\", the signed content says \"NGN\""),
    (lambda d: d["receipt"].update(issue_timestamp="2026-11-21T10:15:00.000Z"), "The file's receipt.issue_timestamp"),
    (lambda d: d["receipt"].update(receipt_id="rcpt_another1_aaaaaa"), "The file's receipt.receipt_id"),
    (lambda d: d["merchant"].update(display_name="Shoprite Lekki (Official)"), "The file's merchant.display_name"),
    (lambda d: d["merchant"].update(merchant_id="shoprite"), "The file's merchant.merchant_id"),
    (lambda d: d["line_items"][0].update(description="Fried rice"), "The file's line_items[0].description"),
    (lambda d: d["line_items"][0].update(quantity=3), "The file's line_items[0].quantity"),
    (lambda d: d["line_items"][0].update(unit_price=5.0), "The file's line_items[0].unit_price is 5"),
    (lambda d: d["line_items"][1].update(line_total=1.0), "The file's line_items[1].line_total"),
    (lambda d: d["line_items"].pop(), "The file's line_items has 1 entries, the signed content 2"),
    (lambda d: d["tax"]["tax_lines"][0].update(rate=0.05), "The file's tax.tax_lines[0].rate is 0.05"),
    (lambda d: d["tax"]["tax_lines"][0].update(base_amount=1.0), "The file's tax.tax_lines[0].base_amount"),
    (lambda d: d["tax"]["tax_lines"][0].update(tax_amount=1.0), "The file's tax.tax_lines[0].tax_amount"),
    (lambda d: d.pop("tax"), "The file has no tax, the signed content says"),
    (lambda d: d["payment"].update(provider="mastercard"), "The file's payment.provider"),
    (lambda d: d["payment"].update(authorization_code="X1"), "The file has payment.authorization_code"),
    (lambda d: d["extensions"]["receco"].update(receipt_number="MAMAPU-2026-000999"),
     "The file's extensions.receco.receipt_number"),
    (lambda d: d["extensions"]["receco"].update(short_code="ZZZZZZ"), "The file's extensions.receco.short_code"),
    (lambda d: d["extensions"]["receco"].update(subtotal=1.0), "The file's extensions.receco.subtotal"),
    (lambda d: d["extensions"]["receco"].update(tip=10.0), "The file's extensions.receco.tip"),
    (lambda d: d["extensions"]["receco"].update(card_last4="0000"), "The file's extensions.receco.card_last4"),
    (lambda d: d["extensions"]["receco"].update(livemode=False), "The file's extensions.receco.livemode"),
    (lambda d: d["extensions"]["receco"].update(tax_lines_inclusive=[False]),
     "The file's extensions.receco.tax_lines_inclusive[0]"),
]  # fmt: skip


@pytest.fixture
def vat_sale(receipt_factory):
    """A sale with a tax line and a card, in the log."""
    sale = receipt_factory(
        token="rcpt_vatsale01_aaaaaa",
        short_code="VATSA1",
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": None},
    )
    append()
    return sale


def test_each_field_of_a_saved_file_changed_is_caught_and_named(phone, live_server, vat_sale, tmp_path):
    page = phone.page
    path = _download(page, vat_sale, tmp_path)
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_checks(page)).to_contain_text(
        "Passed: The file's shop, items, amounts, tax, dates and numbers say what its signed content says."
    )
    for number, (change, named) in enumerate(FIELD_EDITS):
        edited = _edited(path, change).rename(tmp_path / f"edited-{number}.orf.json")
        _open(page, edited)
        expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
        expect(_checks(page)).to_contain_text(named)
        if number == 0:
            assert violations(page) == []
            _shot(page, "verify-total-changed")
    _no_complaints(phone)


def test_the_verdict_names_the_merchant_and_the_identity_receco_checked(
    phone, live_server, merchant, receipt_factory, tmp_path, artifacts
):
    merchant.checked_legal_name, merchant.checked_registration_number = "Mama Put Foods Ltd", "RC1234567"
    merchant.save()
    sale = receipt_factory(token="rcpt_checked01_aaaaaa", short_code="CHECK1")
    append()
    page = phone.page
    path = _download(page, sale, tmp_path)
    standing_section = page.locator(".log-standing")
    expect(standing_section).to_contain_text("Identity checked by Receco: Mama Put Foods Ltd, RC1234567.")
    expect(standing_section).to_contain_text("Its content is what the till of merchant mama-put sent")
    standing_section.screenshot(path=artifacts / "receipt-verified-identity-360x740.png")
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Verified")
    expect(_verdict(page).locator(".verdict-summary")).to_have_text(
        "This receipt is genuine: it is exactly what Receco signed and logged, for the merchant mama-put, "
        "whose identity Receco checked: Mama Put Foods Ltd, RC1234567."
    )
    details = _verdict(page).locator(".signed-details")
    expect(details).to_contain_text("Merchant idmama-put")
    expect(details).to_contain_text("Identity checked by Receco" + "Mama Put Foods Ltd, RC1234567")
    expect(details).to_contain_text("Name on the receiptMama Put Kitchen, Lekki Phase 1 (the merchant's own words)")
    assert violations(page) == []
    _shot(page, "verify-identity-checked")
    page.screenshot(path=artifacts / "verify-identity-checked-360x740.png", full_page=True)


def test_a_shop_name_nobody_checked_is_not_called_verified(phone, live_server, merchant, receipt_factory, tmp_path):
    merchant.name = "Shoprite Lekki (Official)"  # an owner may rename the shop at will
    merchant.save()
    sale = receipt_factory(token="rcpt_unchecked_aaaaaa", short_code="UNCHK1")
    append()
    page = phone.page
    path = _download(page, sale, tmp_path)
    expect(page.locator(".log-standing")).to_contain_text(
        "Receco has not checked who runs this merchant: the name on this receipt is the merchant's own."
    )
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).locator(".verdict-summary")).to_have_text(
        "This receipt is genuine: it is exactly what Receco signed and logged, for the merchant mama-put. "
        "Receco has not checked who runs it: the shop name on the receipt is the merchant's own."
    )
    expect(_verdict(page).locator(".signed-details")).to_contain_text(
        "Identity checked by Receco" + "Not checked by Receco"
    )


def test_a_test_merchants_receipt_under_any_shop_name_is_no_purchase(phone, live_server, tmp_path, artifacts, merchant):
    sale = {
        "merchant_string_id": "test-anything",
        "merchant_name": "Shoprite Lekki (Official)",
        "total_amount": 1300000,
        "items": [{"name": "Television", "quantity": 1, "unit_price": 1300000, "total_price": 1300000}],
    }
    request = urllib.request.Request(
        f"{live_server.url}/api/trpc/createReceiptFromPOS",
        json.dumps(sale).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        token = json.load(response)["result"]["data"]["token"]
    append()
    forged = Receipt.objects.get(token=token)
    page = phone.page
    path = _download(page, forged, tmp_path)
    expect(page.locator(".log-standing")).to_contain_text("Test receipt: not signed")
    assert violations(page) == []
    page.screenshot(path=artifacts / "receipt-test-not-signed-360x740.png", full_page=True)
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Not verified")
    expect(_checks(page)).to_have_text(
        "Failed: This is a test receipt: Receco does not sign test receipts. Anyone can make one, under any shop "
        "name: it records no purchase."
    )
    assert violations(page) == []
    _shot(page, "verify-test-unsigned")


def test_a_test_receipt_signed_before_stays_a_test_receipt(phone, live_server, tmp_path, artifacts, monkeypatch, api):
    from tests.ledger.test_test_receipts import FORGERY, _append_as_before

    status, body = api.post("createReceiptFromPOS", FORGERY)
    forged = Receipt.objects.get(pk=body["result"]["data"]["id"])
    _append_as_before(monkeypatch, forged)
    page = phone.page
    path = _download(page, forged, tmp_path)
    expect(page.locator(".log-standing")).to_contain_text("Verified test receipt")
    page.goto(f"{live_server.url}/app/verify")
    _open(page, path)
    expect(_verdict(page).get_by_role("heading", level=2)).to_have_text("Test receipt: not a purchase")
    expect(_verdict(page).locator(".verdict-summary")).to_contain_text("Nobody paid for it.")
    expect(_verdict(page).locator(".signed-details")).to_contain_text("ModeTest receipt: no purchase")
    expect(_verdict(page).locator(".signed-details")).to_contain_text("Merchant idtest-anything")
    assert violations(page) == []
    _shot(page, "verify-test-signed-before")
    page.screenshot(path=artifacts / "verify-test-signed-before-360x740.png", full_page=True)
