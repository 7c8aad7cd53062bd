"""Every page of the dashboard fits the screen, with realistic data: hundreds of sales,
long names, every status. At 1280x800 and at 360x740 no page scrolls sideways, no list
clips a column (its table scrolls inside nothing either), the cells that matter are on
the screen, dates stay on one line, every image loads (the merchant's logo on a sale's
customer sheet included), and axe-core finds nothing. One walk a size checks all of it
(tests/browser/test_accessibility.py checks the customer's and the sign-in pages).
Screenshots of every page are kept in test-artifacts/ (at phone size its first four screens)."""

from datetime import timedelta

import pytest

from tests.browser.accessibility import violations
from tests.browser.conftest import PHONE, serve_from_here

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1280, "height": 800}
SIZES = [pytest.param(PHONE, id="360x740"), pytest.param(DESKTOP, id="1280x800")]
LONG_NAME = "Mama Put Kitchen & Suya Spot, Admiralty Way, Lekki Phase One Extension"
# A list's key columns: the ones a person reads a row by. Each must be on the screen.
KEY_CELLS = {
    "receipts": ["receipt_code", "amount", "sale_date", "status_words"],
    "deliveries": ["created", "receipt_code", "status"],
    "webhooks": ["url", "enabled"],
    "webhook-deliveries": ["event_type", "status", "created"],
    "webhook-attempts": ["created", "succeeded"],
    "keys": ["label", "state_label", "last_used"],
    "team": ["user", "role"],
    "invitations": ["email", "state"],
    "audit-trail": ["when", "who", "what"],
}
# Cells that stay on one line at 1280 pixels: dates, amounts, and the words of a status.
ONE_LINE_CELLS = ["sale_date", "created", "last_used", "expires", "when", "sent", "next_try", "joined", "amount"]
ONE_LINE_CELLS += ["status_words", "mode", "event_type"]


def _shop(merchant, owner, receipt_factory, live_key, settings):
    """A shop of two years' standing, as the issue's pages were tried with."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from dashboard import team
    from merchants.keys import issue_key, revoke_key, rotate_key
    from merchants.models import MerchantMembership
    from merchants.usage import count_call
    from messaging.models import Delivery as Message
    from receipts.refunds import refund, validate_refund, void
    from receipts.writer import update_contact
    from webhooks.endpoints import create_endpoint
    from webhooks.models import Attempt
    from webhooks.models import Delivery as WebhookDelivery

    settings.RECECO_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    merchant.name, merchant.legal_name = LONG_NAME, "Mama Put Foods and Hospitality Services Nigeria Ltd"
    merchant.save()
    # Loopback refuses at once (allowed above): the deliveries of the last sales have failed attempts.
    long_url = "https://127.0.0.1:9/hooks/receco/mama-put-kitchen/lekki-phase-one/receipts?source=dashboard"
    now = timezone.now()
    sales, endpoint = [], None
    for n in range(240):
        if n == 230:
            endpoint = create_endpoint(merchant, long_url, description="Accounting system of the head office")
            create_endpoint(merchant, "https://127.0.0.1:9/receco", ["receipt.created"], description="Stock")
        items = [
            {"name": "Jollof rice with fried plantain, coleslaw and grilled chicken (large)", "quantity": 2,
             "unit_price": 450000, "total_price": 900000},
            {"name": "Chapman", "quantity": 1, "unit_price": 150000, "total_price": 150000},
        ]  # fmt: skip
        sales.append(
            receipt_factory(
                token=f"rcpt_fit{n:05d}_aaaaaaaa",
                short_code=f"F{n:05d}",
                merchant_name=LONG_NAME,
                total_amount=1050000,
                subtotal_amount=1050000,
                items=items,
                transaction_date=(now - timedelta(hours=n * 3)).isoformat(),
                customer_email=f"adaeze.okonkwo-williams.{n}@customers.mama-put-kitchen.example.com" if n % 3 else None,
                payment_details={"card_brand": "visa", "card_last4": "4242"},
            )
        )
    refund(sales[0], validate_refund({"token": sales[0].token, "items": [{"index": 1, "quantity": 1}]}), keyed=True)
    refund(sales[1], validate_refund({"token": sales[1].token}), keyed=True)
    void(sales[2], "Rung up twice by the evening cashier at the second till", keyed=True)
    update_contact(sales[3], None, "+2348031234567")
    for status, n in [("pending", 4), ("sending", 5), ("retrying", 6), ("sent", 7), ("failed", 8)]:
        Message.objects.create(
            merchant=merchant, receipt=sales[n], channel="email", status=status, attempts=3,
            destination=f"adaeze.okonkwo-williams.{n}@customers.mama-put-kitchen.example.com",
            last_error="SMTPRecipientsRefused: 550 5.1.1 The email account that you tried to reach does not exist",
            next_attempt_at=now + timedelta(minutes=16) if status == "retrying" else None,
            sent_at=now if status == "sent" else None,
        )  # fmt: skip
    for channel, parts in [("sms", 2), ("whatsapp", 1)]:  # the usage page's messages sent (issue 35)
        Message.objects.create(
            merchant=merchant, receipt=sales[9], channel=channel, status="sent", destination="+2348031234567",
            parts=parts, sent_at=now, provider="twilio" if channel == "sms" else "whatsapp",
        )  # fmt: skip
    for delivery in WebhookDelivery.objects.to_endpoint(endpoint)[:5]:
        Attempt.objects.create(
            delivery=delivery, succeeded=False, status_code=503, duration_ms=10000,
            error="Read timed out after 10 seconds: the receiver at 127.0.0.1:9 did not answer in time",
            next_attempt_at=now + timedelta(minutes=3),
        )  # fmt: skip
    laptop = issue_key(merchant, "test", "Back-office laptop of the head office, upstairs").api_key
    for api_key in (live_key.api_key, laptop):  # the usage page's table of calls per key
        api_key.note_used(now)
        count_call(api_key, now)
    rotate_key(laptop)
    revoke_key(issue_key(merchant, "live", "Old till replaced in March").api_key)
    for n, role in enumerate(["member", "member", "owner"]):
        user = User.objects.create_user(
            f"adaeze.okonkwo-williams-{n}", f"adaeze.okonkwo-williams.{n}@mama-put-kitchen.example.com",
            "not-used-in-tests", is_staff=True,
        )  # fmt: skip
        MerchantMembership.objects.create(user=user, merchant=merchant, role=role)
    team.invite(merchant, "chukwuemeka.adebayo-johnson@mama-put-kitchen.example.com", "member", owner)
    return sales, endpoint


@pytest.fixture(params=SIZES)
def screen(request, browser, live_server, settings):
    settings.RECECO_WEB_URL = live_server.url
    size = request.param
    phone = size["width"] < 600
    context = browser.new_context(
        viewport=size, device_scale_factor=2 if phone else 1, is_mobile=phone, has_touch=phone
    )
    serve_from_here(context, live_server.url, [])  # the merchant's logo, as its CDN would
    page = context.new_page()
    yield page, size
    context.close()


def _problems(page, size, name, key_cells) -> list[str]:
    """What does not fit on the page shown now, one line each (nothing: it fits)."""
    page.wait_for_load_state("load")
    found = [f"{name}: {line}" for line in violations(page)]
    wide = page.evaluate("document.scrollingElement.scrollWidth")
    if wide > size["width"]:
        found.append(f"{name}: the page is {wide} px wide in a {size['width']} px window")
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('.results, .attempts-table, pre, table')]
            .filter(el => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible'
                    && el.tagName !== 'PRE')
            .map(el => `${el.tagName.toLowerCase()}.${el.className} scrolls: ${el.scrollWidth} > ${el.clientWidth}`)"""
    )
    found += [f"{name}: {line}" for line in clipped]
    # Every image, in shadow roots too (a sale's customer sheet), once it has loaded or failed.
    broken = page.locator("img").evaluate_all(
        """(images) => Promise.all(images.map(image => image.complete ? image : new Promise(done => {
                image.addEventListener("load", () => done(image));
                image.addEventListener("error", () => done(image));
            }))).then(all => all.filter(image => !(image.naturalWidth > 0))
                .map(image => image.currentSrc || image.src))"""
    )
    found += [f"{name}: the image {source} did not load" for source in broken]
    # One round trip for every column (a list of a hundred rows, thirteen columns).
    columns = page.evaluate(
        """([fields, width]) => fields.map(field => [
            [...document.querySelectorAll(`#result_list tbody tr:nth-child(-n+5) .field-${field}`)]
                .map(cell => cell.getBoundingClientRect())
                .filter(box => box.width === 0 || box.left < 0 || box.right > width + 0.5)
                .map(box => `${Math.round(box.left)}..${Math.round(box.right)}`),
            document.querySelectorAll(`#result_list tbody .field-${field}`).length,
        ])""",
        [key_cells, size["width"]],
    )
    for field, (outside, cells) in zip(key_cells, columns, strict=True):
        if outside:
            found.append(f"{name}: column {field} is not on the screen ({', '.join(outside)})")
        if not cells:
            found.append(f"{name}: no column {field}")
    if size["width"] >= 1024:
        wrapped = page.evaluate(
            """(fields) => fields.map(field => [...document.querySelectorAll(`#result_list .field-${field}`)]
                .filter(cell => {
                    const range = document.createRange();
                    range.selectNodeContents(cell);
                    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1;
                }).map(cell => cell.textContent))""",
            ONE_LINE_CELLS,
        )
        for field, texts in zip(ONE_LINE_CELLS, wrapped, strict=True):
            found += [f"{name}: {field} {text!r} takes more than one line" for text in texts]
    return found


def _sign_in(page, url, user):
    page.goto(f"{url}/admin/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill("not-used-in-tests")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/admin/")


# A phone screenshot keeps the page's first screens: a list of a hundred sales is 18,000
# pixels long, and a full-length shot of it takes seconds for nothing a person looks at.
SHOT_HEIGHT = 4 * PHONE["height"]


def _screenshot(page, size, path) -> None:
    """The page for a person to look at: at phone size its first screens, else the window."""
    if size is PHONE:
        height = min(page.evaluate("document.scrollingElement.scrollHeight"), SHOT_HEIGHT)
        page.screenshot(path=path, full_page=True, clip={"x": 0, "y": 0, "width": size["width"], "height": height})
    else:
        page.screenshot(path=path)


class Walk:
    """The pages of one walk at one size: each checked (``_problems``: fit and axe-core) and
    kept as a screenshot (_screenshot)."""

    def __init__(self, page, size, url, artifacts):
        self.page, self.size, self.url, self.artifacts = page, size, url, artifacts
        self.label = f"{size['width']}x{size['height']}"
        self.problems: list[str] = []

    def check(self, name: str) -> None:
        """The page shown now."""
        self.problems += _problems(self.page, self.size, name, KEY_CELLS.get(name, []))
        if "?q=" in self.page.url and self.page.eval_on_selector(
            "#searchbar", "box => box.scrollWidth > box.clientWidth"
        ):
            self.problems.append(f"{name}: the search box cuts off what was searched for")
        _screenshot(self.page, self.size, self.artifacts / f"dashboard-fit-{name}-{self.label}.png")

    def visit(self, name: str, path: str) -> None:
        self.page.goto(f"{self.url}{path}")
        self.check(name)


def test_every_dashboard_page_fits_and_passes_axe_with_a_busy_shops_data(
    screen, live_server, owner, merchant, receipt_factory, live_key, settings, artifacts
):
    """One walk a size through every page of a shop owner's dashboard, the forms' answers
    included (a key made, an invitation sent): each page fits and axe-core finds nothing."""
    from merchants.models import AuditEntry, MerchantMembership
    from webhooks.models import Delivery as WebhookDelivery

    sales, endpoint = _shop(merchant, owner, receipt_factory, live_key, settings)
    page, size = screen
    walk = Walk(page, size, live_server.url, artifacts)
    walk.visit("sign-in", "/admin/login/")
    _sign_in(page, live_server.url, owner)
    webhook_delivery = WebhookDelivery.objects.to_endpoint(endpoint).filter(attempt_set__isnull=False).first()
    key = live_key.api_key
    for name, path in [
        ("today", "/admin/"),
        ("receipts", "/admin/receipts/receipt/"),
        ("refunds", "/admin/receipts/receipt/?type=refund"),
        ("receipts-search-days", "/admin/receipts/receipt/?q=20%2F11%20-%2022%2F11"),
        ("receipts-search-none", "/admin/receipts/receipt/?q=31%2F02"),
        ("find-a-sale", "/admin/receipts/receipt/?find=1"),
        ("found-by-item", "/admin/receipts/receipt/?q=jollof"),
        ("receipt", f"/admin/receipts/receipt/{sales[0].pk}/change/"),
        ("receipt-history", f"/admin/receipts/receipt/{sales[0].pk}/history/"),
        ("receipt-refund", f"/admin/receipts/receipt/{sales[0].refunds.get().pk}/change/"),
        ("receipt-voided", f"/admin/receipts/receipt/{sales[2].pk}/change/"),
        ("not-found", f"/admin/receipts/receipt/{sales[0].pk + 100_000}/change/"),
        ("deliveries", "/admin/messaging/delivery/"),
        ("webhooks", "/admin/webhooks/endpoint/"),
        ("webhook-add", "/admin/webhooks/endpoint/add/"),
        ("webhook", f"/admin/webhooks/endpoint/{endpoint.pk}/change/"),
        ("webhook-roll", f"/admin/webhooks/endpoint/{endpoint.pk}/roll/"),
        ("webhook-deliveries", "/admin/webhooks/delivery/"),
        ("webhook-delivery", f"/admin/webhooks/delivery/{webhook_delivery.pk}/change/"),
        ("webhook-attempts", "/admin/webhooks/attempt/"),
        ("keys", "/admin/merchants/apikey/"),
        ("key", f"/admin/merchants/apikey/{key.pk}/change/"),
        ("key-rotate", f"/admin/merchants/apikey/{key.pk}/rotate/"),
        ("key-revoke", f"/admin/merchants/apikey/{key.pk}/revoke/"),
        ("key-create", "/admin/merchants/apikey/add/"),
    ]:
        walk.visit(name, path)
    page.get_by_label("Name").fill("Till 2")
    page.get_by_role("button", name="Create the key", exact=True).click()
    walk.check("key-shown")
    # The key just made, first in the audit trail: who, from where, what.
    walk.visit("audit-trail", "/admin/merchants/auditentry/")
    trail = page.locator("#result_list tbody tr").first.inner_text()
    for text in [owner.username, "127.0.0.1", "API key made: Till 2", "name: Till 2"]:
        assert text in trail, text
    entry = AuditEntry.objects.filter(merchant=merchant, object_repr__startswith="Till 2").get()
    walk.visit("audit-entry", f"/admin/merchants/auditentry/{entry.pk}/change/")
    walk.visit("team", "/admin/merchants/merchantmembership/")
    page.get_by_role("link", name="Invite someone").click()
    walk.check("team-invite")
    page.get_by_label("Email").fill("ada@mama-put.example")
    page.get_by_role("button", name="Send invitation", exact=True).click()
    walk.check("team-invited")
    membership = MerchantMembership.objects.get(user=owner)
    for name, path in [
        ("invitations", "/admin/merchants/invitation/"),
        ("team-member", f"/admin/merchants/merchantmembership/{membership.pk}/change/"),
        ("merchants", "/admin/merchants/merchant/"),
        ("shop-details", f"/admin/merchants/merchant/{merchant.pk}/change/"),
        ("usage", f"/admin/merchants/merchant/{merchant.pk}/usage/"),
        ("einvoicing", "/admin/einvoicing/einvoicing/"),
        ("einvoicing-add", "/admin/einvoicing/einvoicing/add/"),
    ]:
        walk.visit(name, path)
    assert walk.problems == [], f"at {walk.label}:\n" + "\n".join(walk.problems)


def test_the_operators_pages_fit_and_mark_test_merchants(screen, live_server, superuser, merchant, sale, artifacts):
    from merchants.models import Merchant
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    test_merchant = Merchant.objects.for_sale("test-mama-put", "Mama Put Kitchen")
    create_receipt(test_merchant, validate_sale({**sale, "merchant_string_id": "test-mama-put"}), livemode=False)
    for n in range(30):
        Merchant.objects.create(string_id=f"shop-{n:02d}-{'x' * 30}", name=f"{LONG_NAME} {n}")
    page, size = screen
    url = live_server.url
    _sign_in(page, url, superuser)
    label = f"{size['width']}x{size['height']}"
    problems = _problems(page, size, "operator-today", [])
    _screenshot(page, size, artifacts / f"dashboard-fit-operator-today-{label}.png")
    assert page.get_by_role("heading", name="Test merchants").is_visible()
    assert page.locator(".test-merchants li").filter(has_text="test-mama-put").locator(".badge-test").is_visible()
    page.goto(f"{url}/admin/merchants/merchant/")
    problems += _problems(page, size, "operator-merchants", ["shop_name", "shop_id"])
    _screenshot(page, size, artifacts / f"dashboard-fit-operator-merchants-{label}.png")
    assert problems == [], f"at {label}:\n" + "\n".join(problems)
