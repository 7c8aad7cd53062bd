"""The locker lists every receipt sent to the proven contact, from every shop, and no other."""

import pytest

from receipts.refunds import refund, validate_refund
from tests.locker.conftest import EMAIL, PHONE

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client, two_shops, signed_in):
    assert signed_in(client).status_code == 302

    def get(**query):
        response = client.get("/app/my", query)
        return response, response.content.decode()

    return get


def _listed(response) -> list[str]:
    return [entry.url for entry in response.context["entries"]]


def test_both_shops_receipts_newest_first_and_nobody_elses(page, two_shops):
    response, html = page()
    assert response.status_code == 200
    assert _listed(response) == [two_shops["corner"].get_absolute_url(), two_shops["mama"].get_absolute_url()]
    assert "Corner Shop" in html
    assert "₦450.50" in html
    assert '22 Nov 2026, <span class="keep">10:30 WAT</span>' in html
    assert "Mama Put Kitchen" in html
    assert "₦1,300.00" in html
    for other in ("not_theirs", "not_theirs_either"):
        assert two_shops[other].token not in html
    assert response["Cache-Control"] == "private, no-store"


def test_each_entry_links_its_receipt_page(client, page, two_shops):
    _, html = page()
    assert f'href="/app/receipt/{two_shops["mama"].token}"' in html
    assert client.get(f"/app/receipt/{two_shops['mama'].token}").status_code == 200


def test_test_receipts_are_not_listed(page, shop_receipt, two_shops):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    sale = {**_sale(two_shops["mama"]), "token": "rcpt_testmode_000009", "short_code": "TEST09"}
    create_receipt(two_shops["mama"].merchant, validate_sale(sale), livemode=False)
    response, _ = page()
    assert len(_listed(response)) == 2


def _sale(receipt) -> dict:
    return {
        "merchant_string_id": receipt.merchant.string_id,
        "merchant_name": receipt.merchant_name,
        "total_amount": 1000,
        "currency": "NGN",
        "transaction_date": "2026-11-21T10:00:00Z",
        "items": [{"name": "Tea", "quantity": 1, "unit_price": 1000, "total_price": 1000}],
        "customer_phone": PHONE,
    }


def test_a_refund_is_shown_on_its_sale(page, two_shops):
    sale = two_shops["mama"]
    created = refund(sale, validate_refund({"token": sale.token, "amount": 30000}), keyed=True)
    response, html = page()
    assert _listed(response) == [two_shops["corner"].get_absolute_url(), sale.get_absolute_url()]
    [entry] = [entry for entry in response.context["entries"] if entry.url == sale.get_absolute_url()]
    assert entry.status == "Partly refunded"
    assert [(r.url, r.amount) for r in entry.refunds] == [(created.receipt.get_absolute_url(), "₦300.00")]
    assert f'<a href="{created.receipt.get_absolute_url()}">Refund of ₦300.00</a>' in html


def test_the_list_and_the_erase_page_count_the_same_receipts_refunds_included(client, page, two_shops):
    sale = two_shops["mama"]
    refund(sale, validate_refund({"token": sale.token, "amount": 30000}), keyed=True)
    response, html = page()
    assert len(_listed(response)) == 2  # the refund is shown on its sale
    assert '<h2 id="found-title">3 receipts</h2>' in html
    erase = client.get("/app/my/erase").content.decode()
    assert "from all 3 receipts shops sent to it" in erase


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"shop": "corner"}, ["corner"]),
        ({"shop": "MAMA put"}, ["mama"]),
        ({"day": "2026-11-20"}, ["mama"]),
        ({"amount": "450.50"}, ["corner"]),
        ({"amount": "1,300"}, ["mama"]),
        ({"shop": "corner", "amount": "1300"}, []),
    ],
)
def test_search_by_shop_date_and_amount(page, two_shops, query, expected):
    response, html = page(**query)
    assert response.status_code == 200
    assert _listed(response) == [two_shops[name].get_absolute_url() for name in expected]
    if not expected:
        assert "No receipt matches." in html


def test_a_bad_search_is_explained(page):
    response, _ = page(amount="lots", day="someday")
    assert response.status_code == 400
    assert response.context["form"].errors == {
        "amount": ["Enter an amount, like 1300 or 1,300.50."],
        "day": ["Enter a date, like 2026-11-22."],
    }


def test_merchant_text_is_escaped(client, signed_in, two_shops):
    from receipts.models import Receipt

    Receipt.objects.filter(pk=two_shops["mama"].pk).update(merchant_name="<script>alert(1)</script>")
    signed_in(client)
    html = client.get("/app/my").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_list_is_paginated_20_a_page(client, shop_receipt, signed_in, two_shops):
    for n in range(20):
        shop_receipt(token=f"rcpt_many{n:04d}_aaaaaa", short_code=f"MANY{n:02d}", customer_phone=PHONE,
                     transaction_date=f"2026-10-{n + 1:02d}T10:00:00Z")  # fmt: skip
    signed_in(client)
    first = client.get("/app/my")
    assert len(first.context["entries"]) == 20
    assert "Page 1 of 2" in first.content.decode()
    second = client.get("/app/my", {"page": 2})
    assert [entry.url for entry in second.context["entries"]] == [
        two_shops["mama"].get_absolute_url().replace("mama0001", "many0001"),
        two_shops["mama"].get_absolute_url().replace("mama0001", "many0000"),
    ]


def test_an_email_address_sees_its_receipts_whatever_their_case(client, shop_receipt, two_shops, mailoutbox,
                                                                  django_capture_on_commit_callbacks):  # fmt: skip
    import re

    mine = shop_receipt(token="rcpt_email002_aaaaaa", short_code="MAIL02", customer_email="ADA.OBI@example.com")
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/app/my/start", {"contact": EMAIL})
    [email] = [message for message in mailoutbox if message.subject == "Sign in to your receipts"]
    link = re.search(r"https://receipts\.example\.test(/app/my/link/\S+)", email.body)[1]
    client.post(link)
    response = client.get("/app/my")
    assert _listed(response) == [mine.get_absolute_url(), two_shops["not_theirs_either"].get_absolute_url()]
    assert "Sent to <strong>a*******@example.com</strong>" in response.content.decode()


def test_without_a_session_the_page_is_the_sign_in_form(client, two_shops):
    response = client.get("/app/my")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Mobile number or email address" in html
    assert two_shops["mama"].token not in html
