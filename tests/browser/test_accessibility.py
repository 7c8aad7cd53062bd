"""Every page a customer or a shop owner uses, checked by axe-core at phone and desktop size.

The suite fails on any violation and names each one; phone-sized screenshots of every
page are kept in test-artifacts/ for a person to look at.
"""

import pytest

from tests.browser.accessibility import Audit
from tests.browser.conftest import PHONE, Visit

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


def test_customer_pages(audit, live_server, receipt_factory, mailoutbox):
    from receipts.refunds import refund, validate_refund, void

    sale = receipt_factory(payment_method="bank_transfer", merchant_logo="https://cdn.example.com/mama-put.png")
    refunded = refund(sale, validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}]}), keyed=True)
    voided = receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01")
    void(voided, "Rung up twice", keyed=True)
    page, url = audit.page, live_server.url

    audit.visit(f"{url}/", "home")
    audit.visit(f"{url}/app/scan", "scan")
    audit.visit(f"{url}/app/scan?code=ZZZZZZ", "scan-unknown-code")
    audit.visit(sale.public_url, "receipt")
    page.get_by_label("Email address").fill("ada@")
    page.get_by_role("button", name="Send my receipt").click()
    audit.check("receipt-send-error")
    page.get_by_label("Email address").fill("ada.customer@example.com")
    page.get_by_role("button", name="Send my receipt").click()
    audit.check("receipt-sent")
    audit.visit(refunded.receipt.public_url, "receipt-refund")
    audit.visit(voided.public_url, "receipt-voided")
    audit.visit(f"{url}/app/receipt/rcpt_notyet01_aaaaaa", "receipt-not-found-yet")
    audit.visit(f"{url}/app/receipt/not-a-code", "receipt-not-found")
    audit.assert_clean()


def _sign_in(page, url, user):
    page.goto(f"{url}/admin/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Log in").click()


def test_dashboard_pages(audit, live_server, owner, merchant, live_key, receipt_factory, settings):
    from receipts.writer import update_contact as attach_contact
    from webhooks.endpoints import create_endpoint
    from webhooks.models import Delivery

    # A webhook endpoint whose address refuses at once: the sale's event has a failed
    # attempt to show. (Loopback is refused unless allowed.)
    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    endpoint = create_endpoint(merchant, "https://127.0.0.1:9/receco", description="Accounting")
    receipt = receipt_factory()
    attach_contact(receipt, "ada.customer@example.com", None)
    page, url = audit.page, live_server.url
    key = live_key.api_key

    audit.visit(f"{url}/admin/login/", "dashboard-sign-in")
    _sign_in(page, url, owner)
    audit.check("dashboard-home")
    audit.visit(f"{url}/admin/merchants/merchant/", "dashboard-merchants")
    audit.visit(f"{url}/admin/merchants/merchant/{merchant.pk}/change/", "dashboard-merchant")
    audit.visit(f"{url}/admin/merchants/merchant/{merchant.pk}/usage/", "dashboard-usage")
    audit.visit(f"{url}/admin/merchants/apikey/", "dashboard-keys")
    audit.visit(f"{url}/admin/merchants/apikey/{key.pk}/change/", "dashboard-key")
    audit.visit(f"{url}/admin/merchants/apikey/{key.pk}/rotate/", "dashboard-key-rotate")
    audit.visit(f"{url}/admin/merchants/apikey/{key.pk}/revoke/", "dashboard-key-revoke")
    audit.visit(f"{url}/admin/merchants/apikey/add/", "dashboard-key-create")
    page.get_by_label("Name").fill("Till 2")
    page.get_by_role("button", name="Save", exact=True).click()
    audit.check("dashboard-key-shown")
    audit.visit(f"{url}/admin/receipts/receipt/", "dashboard-receipts")
    audit.visit(f"{url}/admin/receipts/receipt/{receipt.pk}/change/", "dashboard-receipt")
    audit.visit(f"{url}/admin/messaging/delivery/", "dashboard-deliveries")
    audit.visit(f"{url}/admin/webhooks/endpoint/", "dashboard-webhooks")
    audit.visit(f"{url}/admin/webhooks/endpoint/add/", "dashboard-webhook-add")
    audit.visit(f"{url}/admin/webhooks/endpoint/{endpoint.pk}/change/", "dashboard-webhook")
    audit.visit(f"{url}/admin/webhooks/endpoint/{endpoint.pk}/roll/", "dashboard-webhook-roll")
    audit.visit(f"{url}/admin/webhooks/delivery/", "dashboard-webhook-deliveries")
    delivery = Delivery.objects.to_endpoint(endpoint).earliest("pk")
    audit.visit(f"{url}/admin/webhooks/delivery/{delivery.pk}/change/", "dashboard-webhook-delivery")
    audit.visit(f"{url}/admin/webhooks/attempt/", "dashboard-webhook-attempts")
    audit.assert_clean()
