"""Finding a sale as a shop finds it (dashboard.search), in the dashboard's receipts list:
by code, token, amount as the customer says it, card's last four, the customer's email or
phone however typed, a word of an item's name, a day or days as the shop writes them; one
merchant's sales only; a code opens its sale; each sale found says why."""

import re
from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

from dashboard.search import names_no_day, read_term, typed_days
from receipts.money import typed_amount

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


@pytest.fixture
def clock(monkeypatch):
    """Stop the clock at a moment: ``clock(datetime(...))``; sign in after it (a session
    lasts from the moment it is made)."""
    return lambda moment: monkeypatch.setattr(timezone, "now", lambda: moment)


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
        ("jollof", {"PLN001"}),  # an item's name: "Jollof rice"
        ("JOLLOF RICE", {"PLN001"}),
        ("rice", {"SML001", "PLN001"}),  # "Rice", "Jollof rice"; not "unit_price", a key of every item
        ("gener", {"BIG001"}),
        ("ri%e", set()),  # a wildcard typed is a character searched for
        ("r_ce", set()),
        ("name", set()),  # the items' keys are not their names
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


@pytest.mark.parametrize(
    ("term", "why"),
    [
        ("jollof", {"PLN001": "item: Jollof rice"}),
        ("rice", {"SML001": "item: Rice", "PLN001": "item: Jollof rice"}),
        ("4242", {"BIG001": "card •••• 4242", "SML001": "total ₦4,242.00"}),
        ("0803 123 4567", {"SML001": "phone +234*******67"}),
        ("ada.obi@example.com", {"BIG001": "email A*******@example.com"}),
    ],
)
def test_each_sale_found_says_why_masking_the_contact(client, owner, shop, term, why):
    client.force_login(owner)
    response = client.get(LIST, {"q": term, "p": 1})
    rows = re.findall(
        r'<a href="/admin/receipts/receipt/\d+/change/[^"]*">(\w+)</a></th><td class="field-matched">([^<]*)</td>',
        response.content.decode(),
    )
    assert dict(rows) == why


def test_the_find_a_sale_link_puts_the_cursor_in_the_box(client, owner, shop):
    client.force_login(owner)
    response = client.get(LIST, {"find": 1})
    assert response.status_code == 200
    assert re.search(r'<input type="search"[^>]* id="searchbar" autofocus', response.content.decode())
    assert "<h1>Find a sale</h1>" in response.content.decode()
    assert 'id="searchbar" autofocus' not in client.get(LIST).content.decode()


def test_the_operator_is_not_searched_by_item(client, superuser, shop):
    # Every merchant's receipts would be read for it: the operator narrows to a shop first.
    client.force_login(superuser)
    assert _found(client, "jollof", p=1) == set()


def test_a_search_finds_nothing_of_another_merchant(client, outsider, shop):
    client.force_login(outsider)
    for term in ("19,522.50", "4242", "ada.obi@example.com", "08031234567", "2026-11-20", "BIG001", "jollof"):
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


# Lagos: 13:00 on Monday 23 November 2026.
MONDAY = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("22/11/2026", {"SML001"}),
        ("20/11/26", {"BIG001"}),
        ("22-11-2026", {"SML001"}),
        ("22.11.2026", {"SML001"}),
        ("2026/11/20", {"BIG001"}),
        ("22/11", {"SML001"}),
        ("20 Nov", {"BIG001"}),
        ("20th of November 2026", {"BIG001"}),
        ("Nov 20 2026", {"BIG001"}),
        ("november 22, 2026", {"SML001"}),
        ("today", {"PLN001"}),
        ("Yesterday", {"SML001"}),  # the 22nd in Lagos, though made on the 21st in UTC
        ("21/11", set()),
        ("20/11 - 22/11", {"BIG001", "SML001"}),
        ("20/11-22/11", {"BIG001", "SML001"}),
        ("21 Nov to today", {"SML001", "PLN001"}),
        ("yesterday..today", {"SML001", "PLN001"}),
        ("22/11 – 20/11", {"BIG001", "SML001"}),
        ("31/02", set()),
        ("22.11", set()),  # an amount, ₦22.11, not a day
    ],
)
def test_an_owner_finds_the_days_sales_as_the_shop_writes_the_day(client, owner, shop, clock, term, expected):
    clock(MONDAY)
    client.force_login(owner)
    assert _found(client, term) == expected


def test_today_is_the_shops_day_around_midnight(client, owner, shop, clock):
    clock(datetime(2026, 11, 21, 23, 45, tzinfo=UTC))  # 00:45 on the 22nd in Lagos, the 21st in UTC
    client.force_login(owner)
    assert _found(client, "today") == {"SML001"}
    assert _found(client, "yesterday") == set()
    assert _found(client, "20/11 - yesterday") == {"BIG001"}


def test_a_shop_that_writes_the_month_first_is_read_so(client, owner, merchant, shop, clock):
    merchant.country, merchant.time_zone = "US", "America/New_York"
    merchant.save()
    clock(MONDAY)
    client.force_login(owner)
    assert _found(client, "11/20/2026") == {"BIG001"}
    assert _found(client, "11/21") == {"SML001"}  # 18:30 on the 21st in New York
    assert _found(client, "11/20 - 11/21") == {"BIG001", "SML001"}
    assert _found(client, "20/11/2026") == set()


def test_a_day_without_its_year_is_the_last_one_gone_by(client, owner, receipt_factory, clock):
    clock(datetime(2027, 1, 3, 10, 0, tzinfo=UTC))
    for n, when in enumerate(["2025-12-28T12:00:00Z", "2026-12-28T12:00:00Z", "2027-01-02T12:00:00Z"]):
        receipt_factory(token=f"rcpt_newyear{n}_aaaaaa", short_code=f"NEWYR{n}", transaction_date=when)
    client.force_login(owner)
    assert _found(client, "28/12") == {"NEWYR1"}
    assert _found(client, "28 Dec 2025") == {"NEWYR0"}
    assert _found(client, "28/12 - 2/1") == {"NEWYR1", "NEWYR2"}


def test_a_month_is_the_shops_month(client, owner, receipt_factory, clock):
    """Whole months, in the shop's time zone (Lagos, UTC+1): 23:30 UTC on 31 October is
    already November there."""
    clock(datetime(2026, 12, 1, 0, 30, tzinfo=UTC))  # 01:30 on 1 December in Lagos
    sales = ["2026-10-15T12:00:00Z", "2026-10-31T23:30:00Z", "2026-11-30T22:30:00Z", "2026-11-30T23:30:00Z"]
    for n, when in enumerate(sales):
        receipt_factory(token=f"rcpt_months{n}_aaaaaa", short_code=f"MONTH{n}", transaction_date=when)
    client.force_login(owner)
    assert _found(client, "Nov 2026") == {"MONTH1", "MONTH2"}
    assert _found(client, "november") == {"MONTH1", "MONTH2"}
    assert _found(client, "last month") == {"MONTH1", "MONTH2"}
    assert _found(client, "October") == {"MONTH0"}
    assert _found(client, "this month") == {"MONTH3"}
    assert _found(client, "dec") == {"MONTH3"}  # this December, begun in Lagos
    assert _found(client, "Oct 2025") == set()


def test_the_operator_finds_each_shops_day_as_that_shop_writes_it(
    client, superuser, merchant, other_merchant, sale, clock
):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    other_merchant.country, other_merchant.time_zone = "US", "America/New_York"
    other_merchant.save()
    made = {}
    for shop, code, when in [
        (merchant, "LAGMAY", "2026-05-04T12:00:00Z"),  # 04/05 in Lagos: 4 May
        (merchant, "LAGAPR", "2026-04-05T12:00:00Z"),
        (other_merchant, "NYCAPR", "2026-04-05T12:00:00Z"),  # 04/05 in New York: April 5
        (other_merchant, "NYCMAY", "2026-05-04T12:00:00Z"),
    ]:
        body = {**sale, "merchant_string_id": shop.string_id, "token": f"rcpt_{code.lower()}01_aaaaaa"}
        made[code] = create_receipt(shop, validate_sale({**body, "short_code": code, "transaction_date": when}))
    clock(MONDAY)
    client.force_login(superuser)
    assert _found(client, "04/05/2026") == {"LAGMAY", "NYCAPR"}
    assert _found(client, "13/05/2026") == set()
    assert _found(client, "2026-04-05") == {"LAGAPR", "NYCAPR"}


TODAY = date(2026, 11, 26)  # a Thursday


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("2026-11-22", ("2026-11-22", "2026-11-22")),
        ("2026-11-20 to 2026-11-22", ("2026-11-20", "2026-11-22")),
        ("2026-11-22 - 2026-11-20", ("2026-11-20", "2026-11-22")),
        ("26/11/2026", ("2026-11-26", "2026-11-26")),
        ("26/11/26", ("2026-11-26", "2026-11-26")),
        ("26-11-2026", ("2026-11-26", "2026-11-26")),
        ("26.11.2026", ("2026-11-26", "2026-11-26")),
        ("26/11", ("2026-11-26", "2026-11-26")),
        ("27/11", ("2025-11-27", "2025-11-27")),  # tomorrow: last year's
        ("26 Nov", ("2026-11-26", "2026-11-26")),
        ("26th of November, 2026", ("2026-11-26", "2026-11-26")),
        ("Nov 26 2026", ("2026-11-26", "2026-11-26")),
        ("Nov. 3", ("2026-11-03", "2026-11-03")),
        ("Sept 3", ("2026-09-03", "2026-09-03")),
        ("DEC 31", ("2025-12-31", "2025-12-31")),
        ("today", ("2026-11-26", "2026-11-26")),
        ("yesterday", ("2026-11-25", "2026-11-25")),
        ("29/02", ("2024-02-29", "2024-02-29")),
        ("20/11 - 22/11", ("2026-11-20", "2026-11-22")),
        ("20/11 to 22/11/2026", ("2026-11-20", "2026-11-22")),
        ("20 Nov..today", ("2026-11-20", "2026-11-26")),
        ("22/11 - 20/11", ("2026-11-20", "2026-11-22")),
        ("20/11 - 28/11", ("2026-11-20", "2026-11-28")),  # begun, not over yet
        ("Nov 2026", ("2026-11-01", "2026-11-30")),
        ("november", ("2026-11-01", "2026-11-30")),
        ("Dec", ("2025-12-01", "2025-12-31")),  # not begun this year: last year's
        ("feb 2024", ("2024-02-01", "2024-02-29")),
        ("Sept-2026", ("2026-09-01", "2026-09-30")),
        ("this month", ("2026-11-01", "2026-11-30")),
        ("last month", ("2026-10-01", "2026-10-31")),
    ],
)
def test_days_are_read_as_the_shop_writes_them(text, days):
    assert typed_days(text, TODAY) == tuple(date.fromisoformat(day) for day in days)


@pytest.mark.parametrize(
    ("text", "days"),
    [("11/26/2026", ("2026-11-26", "2026-11-26")), ("11/26", ("2026-11-26", "2026-11-26")),
     ("04/05/2026", ("2026-04-05", "2026-04-05")), ("Nov 26", ("2026-11-26", "2026-11-26")),
     ("26/11/2026", None)],
)  # fmt: skip
def test_a_month_first_country_writes_the_month_first(text, days):
    expected = days and tuple(date.fromisoformat(day) for day in days)
    assert typed_days(text, TODAY, month_first=True) == expected


def test_the_day_order_is_the_merchants_countrys():
    from dashboard.search import MONTH_FIRST

    assert {"US", "PH"} <= MONTH_FIRST
    assert not {"NG", "GH", "KE", "ZA", "GB"} & MONTH_FIRST


def test_a_day_without_its_year_rolls_back_over_the_new_year():
    january = date(2027, 1, 3)
    assert typed_days("last month", january) == (date(2026, 12, 1), date(2026, 12, 31))
    assert typed_days("feb", january) == (date(2026, 2, 1), date(2026, 2, 28))
    assert typed_days("28/12", january) == (date(2026, 12, 28), date(2026, 12, 28))
    assert typed_days("3/1", january) == (date(2027, 1, 3), date(2027, 1, 3))
    assert typed_days("4/1", january) == (date(2026, 1, 4), date(2026, 1, 4))
    assert typed_days("20/12 - 5/1", january) == (date(2026, 12, 20), date(2027, 1, 5))
    assert typed_days("20/12 - 5/1", date(2026, 11, 26)) == (date(2025, 12, 20), date(2026, 1, 5))


@pytest.mark.parametrize(
    "text", ["31/02", "31/02/2026", "29/02/2026", "31/04", "13/13", "0/11", "2026-02-30", "31 Feb", "Feb 30 2026",
             "20/11 - 31/11"],
)  # fmt: skip
def test_an_impossible_day_is_no_day_and_says_so(text):
    assert typed_days(text, TODAY) is None
    assert names_no_day(text, [("NG", "Africa/Lagos")], MONDAY)


@pytest.mark.parametrize(
    "text", ["4242", "22.11", "19,522.50", "2026", "jollof", "nov 0000", "next month", "1-2-3", "K7P2QX"]
)
def test_numbers_and_words_are_no_days(text):
    assert typed_days(text, TODAY) is None
    assert not names_no_day(text, [("NG", "Africa/Lagos")], MONDAY)


def test_a_day_one_shop_has_is_not_called_impossible():
    shops = [("NG", "Africa/Lagos"), ("US", "America/New_York")]
    assert not names_no_day("13/05", shops, MONDAY)  # 13 May in Lagos
    assert names_no_day("13/05", [("US", "America/New_York")], MONDAY)


def test_a_term_with_no_reading_finds_nothing():
    assert read_term("jollof rice") is None
    assert read_term("") is None


@pytest.mark.parametrize(
    ("term", "expected"),
    [("31/12/9999", set()), ("1/1/0001", set()), ("1 Jan 0001", set()),
     ("0001-01-01 to 9999-12-31", {"BIG001", "SML001", "PLN001"})],
)  # fmt: skip
def test_days_at_the_calendars_ends_are_searched_without_an_error(client, owner, shop, term, expected):
    client.force_login(owner)  # Lagos: its first midnight of year 1 is in year 0 in UTC
    assert _found(client, term) == expected


@pytest.fixture
def odd_names(receipt_factory):
    """Sales whose items' names hold what JSON writes escaped, and letters beyond ASCII."""
    return {
        "quote": receipt_factory(
            token="rcpt_quotesl1_aaaaaa",
            short_code="QTE001",
            items=[{"name": 'Pizza 12" (large)', "quantity": 1, "unit_price": 500000, "total_price": 500000}],
        ),
        "slash": receipt_factory(
            token="rcpt_slashsl1_aaaaaa",
            short_code="SLS001",
            items=[{"name": "Eba \\ fufu", "quantity": 1, "unit_price": 500000, "total_price": 500000}],
        ),
        "accent": receipt_factory(
            token="rcpt_accentl1_aaaaaa",
            short_code="ACC001",
            items=[{"name": "Égusi soup", "quantity": 1, "unit_price": 500000, "total_price": 500000}],
        ),
    }


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ('za 12"', {"QTE001"}),
        ('pizza 12" (large)', {"QTE001"}),
        ("(large)", {"QTE001"}),
        ("eba \\ fufu", {"SLS001"}),
        ("\\ f", {"SLS001"}),
        ("Égusi", {"ACC001"}),
        ("ÉGUSI SOUP", {"ACC001"}),
        ('", "', set()),  # the JSON between two names is no name
        ("pizza eba", set()),
    ],
)
def test_an_item_is_found_whatever_its_name_holds(client, owner, odd_names, term, expected):
    client.force_login(owner)
    assert _found(client, term, p=1) == expected


def test_on_postgresql_an_item_is_found_through_the_trigram_index(owner, odd_names):
    from django.db import connection

    from receipts.models import Receipt

    if connection.vendor != "postgresql":
        pytest.skip("the trigram index is PostgreSQL's (receipts/migrations/0013)")
    sales = Receipt.objects.filter(read_term("pizza", items=True).query)
    with connection.cursor() as cursor:  # a table of three rows is read whole otherwise
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = sales.explain()
    assert "receipt_item_names_trgm" in plan
    assert [sale.short_code for sale in sales] == ["QTE001"]


def test_a_search_counts_what_it_found_up_to_a_bound(client, owner, shop, receipt_factory, monkeypatch):
    from dashboard import search

    monkeypatch.setattr(search, "COUNTED", 2)
    receipt_factory(token="rcpt_ricesale1_aaaaa", short_code="RCE001", items=[{"name": "Rice", "quantity": 1,
        "unit_price": 100, "total_price": 100}])  # fmt: skip
    client.force_login(owner)
    page = client.get(LIST, {"q": "rice"}).content.decode()  # three sales: "Rice" twice, "Jollof rice"
    assert '<span class="small quiet">more than 2 results (' in page
    assert re.search(r"\nmore than 2 receipts\n", page)
    assert _found(client, "rice") == {"SML001", "PLN001", "RCE001"}  # the page still shows every one
    page = client.get(LIST, {"q": "jollof"}).content.decode()
    assert '<span class="small quiet">1 result (' in page
    assert "more than" not in page
    page = client.get(LIST).content.decode()  # no search: every sale counted
    assert re.search(r"\n4 receipts\n", page)
    assert "more than" not in page


def test_the_box_says_item_names_are_searched_where_they_are(client, owner, superuser, shop):
    client.force_login(owner)
    assert "A word of an item (jollof), a receipt code, number" in client.get(LIST).content.decode()
    client.force_login(superuser)
    page = client.get(LIST).content.decode()
    assert "A receipt code, number" in page
    assert "jollof" not in page
