"""Finding a sale as a shop finds it (receipts.search), in the dashboard's receipts list:
by code, token, amount as the customer says it, card's last four, the customer's email or
phone however typed, a day or days; one merchant's sales only; a code opens its sale."""

from datetime import date

import pytest

from receipts.money import typed_amount
from receipts.search import read_term, typed_days

pytestmark = pytest.mark.django_db

LIST = "/admin/receipts/receipt/"


@pytest.fixture
def shop(receipt_factory):
    """Three sales of the owner's shop, told apart by every field the search reads."""
    return {
        "big": receipt_factory(
            token="rcpt_bigsale1_aaaaaa",
            short_code="BIG001",
            total_amount=1952250,
            transaction_date="2026-11-20T10:00:00Z",
            items=[{"name": "Generator", "quantity": 1, "unit_price": 1952250, "total_price": 1952250}],
            payment_details={"card_brand": "visa", "card_last4": "4242"},
            customer_email="Ada.Obi@Example.com",
        ),
        "small": receipt_factory(
            token="rcpt_smallsl1_aaaaaa",
            short_code="SML001",
            total_amount=424200,
            transaction_date="2026-11-21T23:30:00Z",
            items=[{"name": "Rice", "quantity": 1, "unit_price": 424200, "total_price": 424200}],
            payment_details={"card_brand": "mastercard", "card_last4": "1881"},
            customer_phone="+2348031234567",
        ),
        "plain": receipt_factory(
            token="rcpt_plainsl1_aaaaaa", short_code="PLN001", transaction_date="2026-11-23T09:00:00Z"
        ),
    }


def _found(client, term, **params) -> set[str]:
    response = client.get(LIST, {"q": term, **params})
    assert response.status_code == 200, response.status_code
    return {receipt.short_code for receipt in response.context["cl"].result_list}


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("19,522.50", {"BIG001"}),
        ("19522.5", {"BIG001"}),
        ("₦19,522.50", {"BIG001"}),
        (" 19522.50 ", {"BIG001"}),
        ("4242", {"BIG001", "SML001"}),  # the card's last four, and ₦4,242.00
        ("•••• 1881", {"SML001"}),
        ("1881", {"SML001"}),
        ("ada.obi@example.com", {"BIG001"}),
        ("ADA.OBI@EXAMPLE.COM", {"BIG001"}),
        ("0803 123 4567", {"SML001"}),
        ("+234 803 123 4567", {"SML001"}),
        ("2026-11-20", {"BIG001"}),
        ("2026-11-21", set()),  # 23:30 UTC on the 21st is 00:30 on the 22nd in Lagos
        ("2026-11-22", {"SML001"}),
        ("2026-11-21 to 2026-11-23", {"SML001", "PLN001"}),
        ("2026-11-20..2026-11-22", {"BIG001", "SML001"}),
        ("jollof", set()),
        ("ada@", set()),
        ("19522", set()),
    ],
)
def test_an_owner_finds_a_sale_as_the_shop_knows_it(client, owner, shop, term, expected):
    client.force_login(owner)
    assert _found(client, term, p=1) == expected


@pytest.mark.parametrize("term", ["sml001", "SML001", "rcpt_smallsl1_aaaaaa"])
def test_a_code_or_token_opens_its_sale_in_one_step(client, owner, shop, term):
    client.force_login(owner)
    response = client.get(LIST, {"q": term})
    assert response.status_code == 302
    assert response["Location"] == f"{LIST}{shop['small'].pk}/change/"


def test_a_search_finds_nothing_of_another_merchant(client, outsider, shop):
    client.force_login(outsider)
    for term in ("19,522.50", "4242", "ada.obi@example.com", "08031234567", "2026-11-20", "BIG001"):
        assert _found(client, term, p=1) == set(), term
    # Another shop's code is not opened either.
    assert client.get(LIST, {"q": "BIG001"}).status_code == 200


def test_the_days_filter_reads_days_in_the_shops_time_zone(client, owner, shop):
    client.force_login(owner)
    page = client.get(LIST, {"sold_from": "2026-11-22", "sold_to": "2026-11-22"})
    assert {r.short_code for r in page.context["cl"].result_list} == {"SML001"}
    assert 'id="sold_from" name="sold_from" value="2026-11-22"' in page.content.decode()
    # One end given: that day alone; the ends in either order.
    assert {r.short_code for r in client.get(LIST, {"sold_from": "2026-11-20"}).context["cl"].result_list} == {"BIG001"}
    backwards = client.get(LIST, {"sold_from": "2026-11-23", "sold_to": "2026-11-20"})
    assert {r.short_code for r in backwards.context["cl"].result_list} == {"BIG001", "SML001", "PLN001"}
    # A search and the filter together.
    assert _found(client, "4242", sold_from="2026-11-22", sold_to="2026-11-23") == {"SML001"}


def test_the_operator_searches_every_merchant(client, superuser, shop, other_merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    body = {**sale, "merchant_string_id": other_merchant.string_id, "token": "rcpt_theirs01_aaaaaa"}
    theirs = create_receipt(other_merchant, validate_sale({**body, "short_code": "THR001", "total_amount": 1952250,
        "items": [{"name": "x", "quantity": 1, "unit_price": 1952250, "total_price": 1952250}]})).receipt  # fmt: skip
    client.force_login(superuser)
    assert _found(client, "19,522.50") == {"BIG001", theirs.short_code}


@pytest.mark.parametrize(
    ("text", "amount"),
    [("19,522.50", "19522.50"), ("19522.5", "19522.5"), ("NGN 19522.50", "19522.50"), ("GH₵ 5", "5"),
     ("1,000,000", "1000000"), ("19,5", None), (".5", None), ("abc", None), ("-5", None), ("1" * 19, None)],
)  # fmt: skip
def test_an_amount_is_read_as_people_type_it(text, amount):
    from decimal import Decimal

    assert typed_amount(text) == (Decimal(amount) if amount else None)


def test_amounts_are_looked_up_in_each_currencys_minor_units():
    term = read_term("4242")
    sql = str(term.query)
    assert "('total_amount', 424200)" in sql
    assert "('total_amount', 4242)" in sql
    assert "('total_amount', 4242000)" in sql
    assert "('total_amount', 4242000)" not in str(read_term("4242.5").query)
    assert "('total_amount', 4242)" not in str(read_term("4242.5").query)


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("2026-11-22", (date(2026, 11, 22), date(2026, 11, 22))),
        ("2026-11-20 to 2026-11-22", (date(2026, 11, 20), date(2026, 11, 22))),
        ("2026-11-22 - 2026-11-20", (date(2026, 11, 20), date(2026, 11, 22))),
        ("2026-02-30", None),
        ("22/11/2026", None),
    ],
)
def test_days_are_read_as_iso_dates(text, days):
    assert typed_days(text) == days


def test_a_term_with_no_reading_finds_nothing():
    assert read_term("jollof rice") is None
    assert read_term("") is None
