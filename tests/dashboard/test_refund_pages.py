"""Refund and void from a sale's page in the dashboard (dashboard.refund_pages): the owner's
two steps, what the confirmation says the customer gets back, one refund however often the
form is posted, the refund receipt sent to the sale's contact, the audit trail, and who may
do it."""

import re

import pytest

from dashboard.refund_forms import CHOOSE_AN_ITEM
from merchants.models import AuditEntry
from messaging.models import Delivery
from receipts.models import Receipt, Void
from receipts.refunds import REFUND_EXCEEDS

pytestmark = pytest.mark.django_db

IP = "203.0.113.9"
ITEMS = [
    {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
    {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
    {"name": "Moi moi", "quantity": 1, "unit_price": 20000, "total_price": 20000},
]
VAT = {"name": "VAT", "rate": 7.5, "taxable_amount": 150000, "tax_amount": 11250, "inclusive": False}


@pytest.fixture
def card_sale(receipt_factory, django_capture_on_commit_callbacks, mailoutbox):
    """A VAT sale of three items paid by card, whose customer gave an email address."""
    with django_capture_on_commit_callbacks(execute=True):
        sale = receipt_factory(
            token="rcpt_cardsale_aaaaaa",
            short_code="CARD01",
            items=ITEMS,
            subtotal_amount=150000,
            tax_lines=[VAT],
            total_amount=161250,
            payment_details={"card_brand": "visa", "card_last4": "4242"},
            customer_email="ada@example.com",
        )
    mailoutbox.clear()
    return sale


def _url(sale, action):
    return f"/admin/receipts/receipt/{sale.pk}/{action}/"


def _token(page) -> str:
    return re.search(r'name="refund_token" value="([^"]+)"', page.content.decode())[1]


def _two_of_three(client, sale, **extra):
    page = client.get(_url(sale, "refund"))
    form = {"what": "items", "item_0": "1", "item_1": "1", "item_2": "0", "reason": "Cold food"}
    return {**form, "refund_token": _token(page), **extra}


def test_an_owner_refunds_two_of_three_items(client, owner, card_sale, mailoutbox, django_capture_on_commit_callbacks):
    client.force_login(owner)
    form = _two_of_three(client, card_sale)

    review = client.post(_url(card_sale, "refund"), {**form, "review": "1"}, REMOTE_ADDR=IP)
    assert review.status_code == 200
    page = review.content.decode()
    assert "The customer gets back ₦860.00" in page
    assert '<dt>VAT 7.5% refunded</dt><dd class="money">₦60.00</dd>' in page
    assert "<dt>Goes back to</dt><dd>Visa •••• 4242</dd>" in page
    assert "Sent to the customer by email" in page
    assert not Receipt.objects.filter(refund_of=card_sale).exists()  # nothing made yet

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(_url(card_sale, "refund"), {**form, "confirm": "1"}, REMOTE_ADDR=IP)
    assert done.status_code == 302
    assert done["Location"] == f"/admin/receipts/receipt/{card_sale.pk}/change/"
    made = Receipt.objects.get(refund_of=card_sale)
    assert made.total_amount == 86000
    assert made.detail("lines") == [{"index": 0, "quantity": 1}, {"index": 1, "quantity": 1}]
    assert made.detail("reason") == "Cold food"
    assert made.keyed
    card_sale.refresh_from_db()
    assert card_sale.status == "partially_refunded"
    assert card_sale.detail("refunded_lines") == {"0": 1, "1": 1}

    # Sent to the sale's contact through the outbox, as the API's refund is.
    delivery = Delivery.objects.get(receipt=made)
    assert (delivery.channel, delivery.destination) == ("email", "ada@example.com")
    (message,) = mailoutbox
    assert message.to == ["ada@example.com"]
    assert f"/app/receipt/{made.short_code}\n" in message.body

    # The sale's page says what was refunded and links the refund.
    sale_page = client.get(done["Location"]).content.decode()
    assert f'Refunded ₦860.00: refund receipt <a href="/admin/receipts/receipt/{made.pk}/change/">' in sale_page
    assert "It is on its way to the customer by email." in sale_page
    # Each item, its quantity and how many of it were refunded.
    items = sale_page[sale_page.index('<table class="item-table">') :].split("</table>", 1)[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>.*?</tr>", items, re.S)]
    assert [(row[0], row[1], row[-1]) for row in rows if row] == [
        ("Jollof rice", "2", "1"),
        ("Chapman", "1", "1"),
        ("Moi moi", "1", "0"),
    ]
    assert f">{made.receipt_number}</a>: ₦860.00 (Jollof rice × 1, Chapman × 1 · Cold food)" in sale_page

    # The audit trail: who, from where, what.
    entry = AuditEntry.objects.get(content_type__model="receipt", object_pk=str(made.pk))
    assert (entry.actor, entry.remote_addr, entry.action) == (owner, IP, AuditEntry.Action.CREATE)
    assert entry.changes_dict["amount"] == ["", "₦860.00"]
    assert entry.changes_dict["refund of sale"] == ["", "CARD01"]
    assert entry.changes_dict["reason"] == ["", "Cold food"]
    assert entry.merchant_id == card_sale.merchant_id


def test_the_same_form_posted_twice_makes_one_refund(client, owner, card_sale):
    client.force_login(owner)
    form = {**_two_of_three(client, card_sale), "confirm": "1"}
    first = client.post(_url(card_sale, "refund"), form)
    second = client.post(_url(card_sale, "refund"), form)
    assert first.status_code == second.status_code == 302
    (made,) = Receipt.objects.filter(refund_of=card_sale)
    following = client.get(second["Location"]).content.decode()
    assert f'This refund was made already: <a href="/admin/receipts/receipt/{made.pk}/change/">' in following
    assert AuditEntry.objects.filter(content_type__model="receipt", object_pk=str(made.pk)).count() == 1


def test_a_refund_of_an_amount_gives_its_tax_back_inside_it(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(_url(card_sale, "refund"))
    form = {"what": "amount", "amount": "1,612.50", "reason": "Overcharged", "refund_token": _token(page)}
    review = client.post(_url(card_sale, "refund"), {**form, "review": "1"}).content.decode()
    assert "The customer gets back ₦1,612.50" in review
    assert '<dt>VAT 7.5% refunded (included)</dt><dd class="money">₦112.50</dd>' in review
    assert client.post(_url(card_sale, "refund"), {**form, "confirm": "1"}).status_code == 302
    assert Receipt.objects.get(refund_of=card_sale).total_amount == 161250


def test_an_amount_typed_with_chosen_items_ticked_goes_straight_to_the_review(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(_url(card_sale, "refund"))
    form = {"what": "items", "amount": "100", "reason": "Overcharged", "refund_token": _token(page)}

    review = client.post(_url(card_sale, "refund"), {**form, "review": "1"})

    assert review.status_code == 200
    page = review.content.decode()
    assert "The customer gets back ₦100.00" in page
    assert '<input type="hidden" name="what" value="amount">' in page  # confirmed as read
    assert client.post(_url(card_sale, "refund"), {**form, "confirm": "1"}).status_code == 302
    assert Receipt.objects.get(refund_of=card_sale).total_amount == 10000


def test_the_refund_form_ticks_an_amount_as_it_is_typed(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(_url(card_sale, "refund")).content.decode()
    assert '<script src="/static/dashboard/refund.js" defer></script>' in page
    assert '<form method="post" novalidate class="refund-form">' in page


def test_the_review_says_why_one_plate_gives_back_less_than_its_price(client, owner, receipt_factory):
    sale = receipt_factory(
        items=ITEMS, subtotal_amount=150000, discount_amount=15000, tax_lines=[{**VAT, "tax_amount": 10125}],
        total_amount=145125,
    )  # fmt: skip
    client.force_login(owner)
    form = client.get(_url(sale, "refund"))
    assert (
        '<p class="help refund-note">The sale had a discount of ₦150.00 (10%) and VAT 7.5% on top: items give '
        "back their share of what the customer paid, shown before you confirm.</p>"
    ) in form.content.decode()
    posted = {"what": "items", "item_0": "1", "reason": "Cold food", "refund_token": _token(form), "review": "1"}

    review = client.post(_url(sale, "refund"), posted).content.decode()

    assert "The customer gets back ₦483.75" in review
    assert (
        '<p class="refund-why">The sale had a discount of ₦150.00 (10%) and VAT 7.5% on top; this item&#x27;s '
        "share of them is -₦16.25, so the customer gets back ₦483.75, not ₦500.00.</p>"
    ) in review


@pytest.mark.parametrize("typed", ["19522.5", "19,522.50", "₦19,522.50"])
def test_an_amount_is_typed_as_the_customer_says_it(client, owner, receipt_factory, typed):
    sale = receipt_factory(total_amount=2000000, items=[
        {"name": "Generator", "quantity": 1, "unit_price": 2000000, "total_price": 2000000}])  # fmt: skip
    client.force_login(owner)
    form = {"what": "amount", "amount": typed, "reason": "Part returned", "refund_token": "dashboard_refund_0001"}
    assert client.post(_url(sale, "refund"), {**form, "confirm": "1"}).status_code == 302
    assert Receipt.objects.get(refund_of=sale).total_amount == 1952250


def test_an_over_refund_is_refused_with_the_refund_rules_words(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(_url(card_sale, "refund"))
    form = {"what": "items", "item_0": "3", "reason": "Cold food", "refund_token": _token(page)}
    for step in ("review", "confirm"):
        response = client.post(_url(card_sale, "refund"), {**form, step: "1"})
        assert response.status_code == 200
        assert f'<div class="errornote" role="alert"><p>{REFUND_EXCEEDS}</p></div>' in response.content.decode()
    form.update(what="amount", amount="1,612.51")
    response = client.post(_url(card_sale, "refund"), {**form, "review": "1"})
    assert REFUND_EXCEEDS in response.content.decode()
    assert not Receipt.objects.filter(refund_of=card_sale).exists()


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"what": "items"}, None, CHOOSE_AN_ITEM),
        ({"what": "amount", "amount": ""}, "amount", "Type the amount to refund."),
        ({"what": "amount", "amount": "12,34"}, "amount", "Type an amount such as 1,500.00 or 1500"),
        ({"what": "amount", "amount": "1.234"}, "amount", "Amounts in NGN have at most 2 decimal places"),
        ({"what": "amount", "amount": "0"}, "amount", "Type an amount above zero."),
        ({"what": "all", "reason": ""}, "reason", "This field is required."),
    ],
)
def test_a_form_that_says_no_refund_says_why(client, owner, card_sale, form, field, message):
    client.force_login(owner)
    posted = {"reason": "Cold food", "refund_token": "dashboard_refund_0002", **form, "review": "1"}
    response = client.post(_url(card_sale, "refund"), posted)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert errors[field or "__all__"] == [message]


def test_an_owner_voids_a_sale_with_a_reason(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(_url(card_sale, "void"))
    assert page.status_code == 200
    assert "Yes, void this sale" in page.content.decode()
    response = client.post(_url(card_sale, "void"), {"reason": "Rung up twice"}, REMOTE_ADDR=IP)
    assert response.status_code == 302
    card_sale.refresh_from_db()
    assert card_sale.status == "voided"
    void = Void.objects.get(receipt=card_sale)
    assert (void.reason, void.keyed) == ("Rung up twice", True)
    assert "Sale CARD01 voided." in client.get(response["Location"]).content.decode()
    entry = AuditEntry.objects.get(content_type__model="void", object_pk=str(void.pk))
    assert (entry.actor, entry.remote_addr, entry.changes_dict["reason"]) == (owner, IP, ["", "Rung up twice"])
    # Posted again: the same void, said so.
    again = client.post(_url(card_sale, "void"), {"reason": "Rung up twice"})
    assert "This sale was voided already." in client.get(again["Location"]).content.decode()
    assert Void.objects.count() == 1
    # A voided sale offers neither action.
    sale_page = client.get(f"/admin/receipts/receipt/{card_sale.pk}/change/").content.decode()
    assert f"/{card_sale.pk}/refund/" not in sale_page
    assert f"/{card_sale.pk}/void/" not in sale_page
    refund_page = client.get(_url(card_sale, "refund")).content.decode()
    assert '<p class="errornote" role="alert">A voided receipt cannot be refunded</p>' in refund_page


def test_a_sale_with_refunds_cannot_be_voided(client, owner, card_sale):
    client.force_login(owner)
    client.post(_url(card_sale, "refund"), {**_two_of_three(client, card_sale), "confirm": "1"})
    page = client.get(_url(card_sale, "void")).content.decode()
    assert "Only a receipt with no refunds can be voided" in page
    assert client.post(_url(card_sale, "void"), {"reason": "Oops"}).status_code == 200
    card_sale.refresh_from_db()
    assert card_sale.status == "partially_refunded"


def test_a_void_needs_a_reason(client, owner, card_sale):
    client.force_login(owner)
    response = client.post(_url(card_sale, "void"), {"reason": " "})
    assert response.status_code == 200
    assert response.context["form"].errors["reason"] == ["This field is required."]
    assert not Void.objects.exists()


def test_an_owner_sees_the_buttons(client, owner, card_sale):
    client.force_login(owner)
    page = client.get(f"/admin/receipts/receipt/{card_sale.pk}/change/").content.decode()
    assert f'<a href="/admin/receipts/receipt/{card_sale.pk}/refund/">Refund</a>' in page
    assert f'<a href="/admin/receipts/receipt/{card_sale.pk}/void/">Void</a>' in page


def test_a_member_sees_the_sale_without_buttons_and_may_not_act(client, member, card_sale):
    client.force_login(member)
    page = client.get(f"/admin/receipts/receipt/{card_sale.pk}/change/")
    assert page.status_code == 200
    assert f"/{card_sale.pk}/refund/" not in page.content.decode()
    assert f"/{card_sale.pk}/void/" not in page.content.decode()
    for action in ("refund", "void"):
        assert client.get(_url(card_sale, action)).status_code == 403
        form = {"what": "all", "reason": "x", "refund_token": "dashboard_refund_0003", "confirm": "1"}
        assert client.post(_url(card_sale, action), form).status_code == 403
    card_sale.refresh_from_db()
    assert card_sale.status == "completed"
    assert not Receipt.objects.filter(refund_of=card_sale).exists()


def test_another_merchants_sale_is_not_found(client, outsider, card_sale):
    client.force_login(outsider)
    for action in ("refund", "void"):
        assert client.get(_url(card_sale, action)).status_code == 404
        form = {"what": "all", "reason": "x", "refund_token": "dashboard_refund_0004", "confirm": "1"}
        assert client.post(_url(card_sale, action), form).status_code == 404
    card_sale.refresh_from_db()
    assert card_sale.status == "completed"


def test_the_operator_may_refund_for_a_shop(client, superuser, card_sale):
    client.force_login(superuser)
    form = {"what": "all", "reason": "Chargeback", "refund_token": "dashboard_refund_0005", "confirm": "1"}
    assert client.post(_url(card_sale, "refund"), form).status_code == 302
    assert Receipt.objects.get(refund_of=card_sale).total_amount == 161250
    entry = AuditEntry.objects.get(
        content_type__model="receipt", object_pk=str(Receipt.objects.get(refund_of=card_sale).pk)
    )
    assert entry.actor == superuser


def test_a_refund_receipt_offers_no_refund(client, owner, card_sale):
    client.force_login(owner)
    client.post(_url(card_sale, "refund"), {**_two_of_three(client, card_sale), "confirm": "1"})
    made = Receipt.objects.get(refund_of=card_sale)
    page = client.get(f"/admin/receipts/receipt/{made.pk}/change/").content.decode()
    assert f"/{made.pk}/refund/" not in page
    assert "A refund cannot be refunded" in client.get(_url(made, "refund")).content.decode()


def test_the_form_is_not_kept_by_caches_and_each_showing_has_its_own_refund_token(client, owner, card_sale):
    client.force_login(owner)
    first, second = client.get(_url(card_sale, "refund")), client.get(_url(card_sale, "refund"))
    assert "no-store" in first["Cache-Control"]
    assert _token(first) != _token(second)


def test_no_dashboard_url_lets_another_shop_act_on_the_sale_or_read_its_trail(client, owner, outsider, card_sale):
    client.force_login(owner)
    client.post(_url(card_sale, "refund"), {**_two_of_three(client, card_sale), "confirm": "1"}, REMOTE_ADDR=IP)
    made = Receipt.objects.get(refund_of=card_sale)
    entry = AuditEntry.objects.get(content_type__model="receipt", object_pk=str(made.pk))
    client.force_login(outsider)
    sale, trail = "/admin/receipts/receipt", "/admin/merchants/auditentry"
    form = {"what": "all", "reason": "Taken over", "refund_token": "taken_over_0001", "confirm": "1", "post": "yes"}
    answers = {}
    for pk in (card_sale.pk, made.pk):
        for page in ("change", "history", "refund", "void", "delete"):
            for method in ("get", "post"):
                answers[method, f"{sale}/{pk}/{page}/"] = getattr(client, method)(f"{sale}/{pk}/{page}/", form)
    for page in ("change", "history", "delete"):
        for method in ("get", "post"):
            answers[method, f"{trail}/{entry.pk}/{page}/"] = getattr(client, method)(
                f"{trail}/{entry.pk}/{page}/", form
            )
    # Not found, as if there were no such sale or entry; deleting them, or posting a change to
    # either (both read-only), is refused before anything is looked up.
    refused = {
        (method, url)
        for method, url in answers
        if url.endswith("/delete/") or (method, url[-8:]) == ("post", "/change/")
    }
    assert {key: response.status_code for key, response in answers.items()} == {
        key: 403 if key in refused else 404 for key in answers
    }
    assert not [key for key, response in answers.items() if "CARD01" in response.content.decode()]
    card_sale.refresh_from_db()
    assert (card_sale.status, card_sale.refunds.count(), Void.objects.count()) == ("partially_refunded", 1, 0)
    assert AuditEntry.objects.filter(pk=entry.pk, object_repr=f"{made.short_code} of sale CARD01").exists()


def test_the_sales_history_says_what_was_done_in_the_shops_time(client, owner, card_sale):
    client.force_login(owner)
    history = f"/admin/receipts/receipt/{card_sale.pk}/history/"
    assert "Nothing has been done to this receipt from the dashboard yet." in client.get(history).content.decode()
    client.post(_url(card_sale, "refund"), {**_two_of_three(client, card_sale), "confirm": "1"})
    made = Receipt.objects.get(refund_of=card_sale)
    row = re.search(
        r"<tr>\s*<th[^>]*>(.*?)</th>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", client.get(history).content.decode()
    )
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d WAT", row[1])
    assert (row[2], row[3]) == ("olu", f"Refunded ₦860.00: {made}")
