"""Every page a customer uses, and the dashboard's sign-in pages, checked by axe-core at
phone and desktop size. The rest of the dashboard's pages are checked by axe-core in the
walk that checks they fit (tests/browser/test_dashboard_fit.py), one walk a size.

The suite fails on any violation and names each one; phone-sized screenshots of every
page are kept in test-artifacts/ for a person to look at.
"""

import re

import pytest

from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE, Visit
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
SIZES = [pytest.param(PHONE, id="360x740"), pytest.param(DESKTOP, id="1280x800")]


@pytest.fixture(params=SIZES)
def audit(request, browser, live_server, settings, artifacts):
    settings.RECECO_WEB_URL = live_server.url
    size = request.param
    phone = size["width"] < 600
    scale = 2 if phone else 1
    context = browser.new_context(viewport=size, device_scale_factor=scale, is_mobile=phone, has_touch=phone)
    visit = Visit(context, live_server.url)
    yield Audit(visit.page, size, artifacts)
    context.close()


def test_customer_pages(audit, live_server, merchant, receipt_factory, mailoutbox, settings, monkeypatch):
    from einvoicing.models import Report
    from receipts.refunds import refund, validate_refund, void

    # A VAT sale paid by card, of a registered company: a refund shows its VAT and the card.
    merchant.legal_name, merchant.registration_number = "Mama Put Foods Ltd", "RC1234567"
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.receipt_prefix = "MP"
    merchant.save()
    sale = receipt_factory(
        merchant_logo="https://cdn.example.com/mama-put.png",
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}],
        total_amount=139750,
        payment_details={"card_brand": "visa", "card_last4": "4242"},
    )
    refunded = refund(sale, validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}]}), keyed=True)
    voided = receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01")
    void(voided, "Rung up twice", keyed=True)
    altered = receipt_factory(token="rcpt_altered1_aaaaaa", short_code="ALTER1")
    append()  # in the log: their pages say "Verified receipt"
    type(altered).objects.filter(id=altered.id).update(total_amount=1)  # behind the service's back: "Not verified"
    fresh = receipt_factory(token="rcpt_fresh001_aaaaaa", short_code="FRESH1")  # not yet: "Being verified"
    page, url = audit.page, live_server.url

    audit.visit(f"{url}/", "home")
    audit.visit(f"{url}/app/scan", "scan")
    audit.visit(f"{url}/app/scan?code=ZZZZZZ", "scan-unknown-code")
    audit.visit(f"{url}/app/verify", "verify")
    audit.visit(sale.public_url, "receipt")
    page.get_by_label("Email address").fill("ada@")
    page.get_by_role("button", name="Send my receipt").click()
    audit.check("receipt-send-error")
    page.get_by_label("Email address").fill("ada.customer@example.com")
    page.get_by_role("button", name="Send my receipt").click()
    audit.check("receipt-sent")
    # "Not your receipt?", from the link of the email just sent (docs/privacy.md).
    not_mine = re.search(r"Not your receipt\? Remove this address from it: (\S+)", mailoutbox[-1].body)[1]
    audit.visit(not_mine, "not-mine")
    page.get_by_role("button", name="Remove my address from this receipt").click()
    audit.check("not-mine-removed")
    audit.visit(not_mine, "not-mine-already-removed")
    audit.visit(not_mine[:-1] + ("A" if not_mine[-1] != "A" else "B"), "not-mine-not-valid")
    expired = f"{url}/app/receipt/{sale.short_code}/not-mine?k={_old_key(sale, monkeypatch)}"
    audit.visit(expired, "not-mine-expired")
    audit.visit(refunded.receipt.public_url, "receipt-refund")
    audit.visit(voided.public_url, "receipt-voided")
    audit.visit(fresh.public_url, "receipt-being-verified")
    audit.visit(altered.public_url, "receipt-not-verified")
    # A receipt NRS stamped (its IRN and NRS QR code), on a deployment that offers WhatsApp.
    stamped = receipt_factory(token="rcpt_stamped1_aaaaaa", short_code="STAMP1")
    Report.objects.create(
        merchant_id=merchant.pk, receipt=stamped, document="invoice", irn="MP2026000004-94ND90NR-20261122",
        state="reported", qr_payload="UVIgcGF5bG9hZCBvZiBOUlM=",
    )  # fmt: skip
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"
    audit.visit(stamped.public_url, "receipt-e-invoice-whatsapp")
    page.get_by_role("button", name="Gift receipt").click()
    audit.check("gift-receipt")
    audit.visit(f"{url}/app/gift/nosuchgiftreceipt_000000", "gift-receipt-not-found")
    audit.visit(f"{url}/app/receipt/rcpt_notyet01_aaaaaa", "receipt-not-found-yet")
    audit.visit(f"{url}/app/receipt/not-a-code", "receipt-not-found")
    audit.assert_clean()


def _old_key(receipt, monkeypatch) -> str:
    """A "Not your receipt?" key made longer ago than the contact retention (receipts.detach_links):
    made as the service makes it, with Django's signing clock set back."""
    import time

    from django.conf import settings
    from django.core import signing

    from receipts import detach_links

    then = signing.b62_encode(int(time.time()) - settings.RECECO_CONTACT_RETENTION_DAYS * 86400 - 60)
    with monkeypatch.context() as patched:
        patched.setattr(signing.TimestampSigner, "timestamp", lambda self: then)
        return detach_links.key(receipt, "customer_email", "ada.customer@example.com")


def _totp_now(user) -> str:
    from django_otp.oath import TOTP
    from django_otp.plugins.otp_totp.models import TOTPDevice

    device = TOTPDevice.objects.get(user=user)
    return str(TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()).zfill(6)


def test_sign_in_pages(audit, live_server, owner, merchant, settings, mailoutbox):
    """Two-step sign-in set up and used, and a forgotten password reset, page by page."""
    settings.RECECO_DASHBOARD_REQUIRE_2FA = True
    owner.email = "olu@mama-put.example"
    owner.save()
    page, url = audit.page, live_server.url

    from dashboard import team

    _, token = team.invite(merchant, "ada@mama-put.example", "member", owner)
    audit.visit(f"{url}/admin/join/{token}/", "dashboard-team-join")
    page.get_by_label("User name").fill("ada")
    page.locator("#id_password1").fill("Jollof-and-chapman-42")
    page.get_by_label("The same password again").fill("Jollof-and-chapman-42")
    page.get_by_role("button", name="Make my account").click()
    audit.check("dashboard-team-joined")
    audit.visit(f"{url}/admin/join/{token}/", "dashboard-team-join-used")

    audit.visit(f"{url}/admin/password-reset/", "dashboard-password-reset")
    page.get_by_label("Email address").fill(owner.email)
    page.get_by_role("button", name="Email me a link").click()
    audit.check("dashboard-password-reset-sent")
    link = next(line for line in mailoutbox[0].body.splitlines() if "/admin/password-reset/" in line)
    audit.visit(link, "dashboard-password-reset-new")
    page.get_by_label("New password").fill("A-new-long-pass-42")
    page.get_by_label("Confirm password").fill("A-new-long-pass-42")
    page.get_by_role("button").filter(has_text="password").click()
    audit.check("dashboard-password-reset-done")

    page.goto(f"{url}/admin/login/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("A-new-long-pass-42")
    page.get_by_role("button", name="Sign in").click()
    audit.check("dashboard-two-step-prove")
    page.get_by_role("button", name="Email me the set-up link").click()
    audit.check("dashboard-two-step-link-sent")
    link = next(line for line in mailoutbox[-1].body.splitlines() if "/admin/two-step/link/" in line)
    audit.visit(link, "dashboard-two-step-link")
    page.get_by_role("button", name="Set up my authenticator app").click()
    audit.check("dashboard-two-step-setup")
    page.get_by_label("Code from the app").fill(_totp_now(owner))
    page.get_by_role("button", name="Turn on two-step sign-in").click()
    audit.check("dashboard-two-step-recovery-codes")
    recovery = page.get_by_role("list", name="Recovery codes").locator("code").first.inner_text()
    audit.visit(f"{url}/admin/two-step/", "dashboard-two-step-on")
    page.get_by_role("button", name="Sign out").click()
    audit.check("dashboard-signed-out")

    page.goto(f"{url}/admin/login/")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("A-new-long-pass-42")
    page.get_by_role("button", name="Sign in").click()
    audit.check("dashboard-sign-in-code")
    page.get_by_label(re.compile(r"^Code")).fill("000000x")
    page.get_by_role("button", name="Sign in").click()
    audit.check("dashboard-sign-in-code-wrong")
    audit.assert_clean()
    assert recovery
