"""The dashboard's home page: named for the product, today's figures of the user's own
merchants only, and a "View site" link to a real page."""

import re

import pytest

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_it_shows_today_for_the_users_merchant(client, owner, receipt_factory):
    receipt_factory()  # dated 22 Nov: not today
    client.force_login(owner)
    response = client.get("/admin/")
    assert response.status_code == 200
    text = _text(response.content.decode())
    assert re.search(r"Mama Put Kitchen: \w+day \d+ \w+, Lagos time \(WAT\)", text)
    assert "Receipts today 0 Takings ₦0.00 Sent to customers 0 Failed to send 0" in text
    assert "Receipts today: live sales rung up between midnight and midnight in the shop&#x27;s time zone;" in text
    assert "((" not in text


def test_it_never_shows_another_merchants_figures(client, outsider, merchant):
    client.force_login(outsider)
    text = _text(client.get("/admin/").content.decode())
    assert "Corner Shop:" in text
    assert "Mama Put Kitchen" not in text


def test_a_user_of_no_merchant_is_told_what_to_do(client, db):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("nobody", is_staff=True))
    assert "You are not part of any shop yet." in client.get("/admin/").content.decode()


def test_it_reads_as_the_product_and_view_site_goes_home(client, owner):
    client.force_login(owner)
    html = client.get("/admin/").content.decode()
    assert "<title>Today | Receco dashboard</title>" in html
    assert '<div id="site-name"><a href="/admin/">Receco dashboard</a></div>' in html
    assert '<a href="/">View site</a>' in html
    assert "Django" not in html
    assert client.get("/").status_code == 200


def test_sign_in_has_its_heading(client, db):
    html = client.get("/admin/login/").content.decode()
    assert "<h1>Sign in</h1>" in html
    assert "<title>Sign in | Receco dashboard</title>" in html


def test_failed_deliveries_link_to_the_list_of_them(client, owner, merchant, receipt_factory):
    from django.utils import timezone

    from messaging.models import Delivery

    receipt = receipt_factory(transaction_date=timezone.now().isoformat())
    Delivery.objects.create(
        merchant=receipt.merchant, receipt=receipt, channel="email", destination="a@example.com", status="failed"
    )
    client.force_login(owner)
    html = client.get("/admin/").content.decode()
    link = f'<a href="/admin/messaging/delivery/?status__exact=failed&amp;merchant={merchant.pk}">1</a>'
    assert link in html
    assert client.get(f"/admin/messaging/delivery/?status__exact=failed&merchant={merchant.pk}").status_code == 200


def test_the_operator_sees_test_merchants_apart_and_marked(client, superuser, merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    # A till's first test sale made test-mama-put, under the same shop name.
    test_sale = {**sale, "merchant_string_id": "test-mama-put", "transaction_date": timezone_now_iso()}
    from merchants.models import Merchant

    test_merchant = Merchant.objects.for_sale("test-mama-put", "Mama Put Kitchen")
    create_receipt(test_merchant, validate_sale(test_sale), livemode=False)
    client.force_login(superuser)
    html = client.get("/admin/").content.decode()
    text = _text(html)
    assert len(re.findall(r"<h2 id=\"today-\d+\">Mama Put Kitchen:", html)) == 1  # one panel: the real shop
    assert "Merchant id mama-put" in text
    assert "Test merchants" in text
    assert "Test Mama Put Kitchen test-mama-put : 1 test sale today, Lagos time (WAT)" in text


def timezone_now_iso() -> str:
    from django.utils import timezone

    return timezone.now().isoformat()


def test_the_list_of_every_page_is_folded_away(client, owner):
    client.force_login(owner)
    html = client.get("/admin/").content.decode()
    assert '<details class="every-page">' in html
    assert "Recent actions" not in html


def test_its_pages_name_an_empty_icon_so_browsers_ask_for_no_favicon(client, owner):
    # Without a link of its own, every new browser window asks for /favicon.ico and logs a 404.
    icon = '<link rel="icon" href="data:,">'
    assert icon in client.get("/admin/login/").content.decode()
    client.force_login(owner)
    assert icon in client.get("/admin/").content.decode()


def test_today_lists_the_latest_sales_and_finds_a_sale_from_here(client, owner, receipt_factory):
    sale = receipt_factory(total_amount=250000)
    client.force_login(owner)
    html = client.get("/admin/").content.decode()
    form = '<form class="today-find" method="get" action="/admin/receipts/receipt/" role="search"'
    assert f'{form} aria-label="Find a sale">' in html
    assert f'<a href="/admin/receipts/receipt/{sale.pk}/change/"><span class="code">K7P2QX</span>' in html
    assert "Latest sales" in _text(html)
    assert "K7P2QX ₦2,500.00 22 Nov, 11:15 WAT" in _text(html)


def test_today_links_what_needs_attention_to_its_list(client, owner, merchant, receipt_factory):
    from datetime import timedelta

    from django.utils import timezone

    from receipts.models import Receipt

    sale = receipt_factory(transaction_date=timezone.now().isoformat())
    Receipt.objects.filter(pk=sale.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    client.force_login(owner)
    html = client.get("/admin/").content.decode()
    url = f"/admin/receipts/receipt/?logged=no&amp;merchant={merchant.pk}"
    assert f'<a href="{url}">1 receipt not in the receipt log yet</a>' in html
    assert "<caption>Takings by hour, Lagos time (WAT)</caption>" in html


def test_a_member_of_another_merchant_finds_nothing_of_ours_from_today(client, outsider, receipt_factory):
    receipt_factory()
    client.force_login(outsider)
    html = client.get("/admin/").content.decode()
    assert "K7P2QX" not in html
    assert client.get("/admin/receipts/receipt/", {"q": "jollof"}).context["cl"].result_count == 0
