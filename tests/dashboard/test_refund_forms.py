"""The dashboard's refund form (dashboard.refund_forms): what the owner filled in is what is
refunded, and why a refund of items gives back other than their prices, in words, from the
plan that makes the refund (receipts.refunds.plan_refund)."""

import pytest

from dashboard.refund_forms import AMOUNT, CHOOSE_AN_ITEM, ITEMS, RefundForm, meant, why_it_differs
from receipts.refunds import plan_refund
from tests.dashboard.test_refund_pages import ITEMS as ITEMS_SOLD  # the same three plates

pytestmark = pytest.mark.django_db

VAT = {"name": "VAT", "rate": 7.5, "taxable_amount": 135000, "tax_amount": 10125, "inclusive": False}


@pytest.fixture
def discounted(receipt_factory):
    """₦1,500.00 of items, 10% off, VAT on top: ₦1,451.25."""
    return receipt_factory(
        token="rcpt_discount_aaaaaa",
        short_code="DISC01",
        items=ITEMS_SOLD,
        subtotal_amount=150000,
        discount_amount=15000,
        tax_lines=[VAT],
        total_amount=145125,
    )


def _form(sale, **data):
    posted = {"what": ITEMS, "reason": "Cold food", "refund_token": "dashboard_refund_0001"}
    return RefundForm(sale, {**posted, **data})


@pytest.mark.parametrize(
    ("what", "items_chosen", "amount_typed", "expected"),
    [
        (ITEMS, False, True, AMOUNT),  # an amount typed, the choice left alone
        (AMOUNT, True, False, ITEMS),  # a quantity chosen, the choice left alone
        (ITEMS, True, True, ITEMS),  # both filled: the choice ticked decides
        (AMOUNT, True, True, AMOUNT),
        (ITEMS, False, False, ITEMS),  # nothing filled: the choice's own error follows
        ("all", False, True, "all"),  # everything left is never guessed from an amount
    ],
)
def test_what_is_refunded_follows_what_was_filled_in(what, items_chosen, amount_typed, expected):
    assert meant(what, items_chosen, amount_typed) == expected


def test_an_amount_typed_with_chosen_items_ticked_is_a_refund_of_that_amount(discounted):
    form = _form(discounted, amount="250.00")

    assert form.is_valid(), form.errors
    assert form.cleaned_data["what"] == AMOUNT
    assert form.request["amount"] == 25000
    assert form.request["items"] is None
    assert form["what"].value() == AMOUNT  # shown again as it was read


def test_nothing_chosen_and_no_amount_still_asks_for_an_item(discounted):
    form = _form(discounted, amount="")

    assert not form.is_valid()
    assert form.errors["__all__"] == [CHOOSE_AN_ITEM]


def test_the_form_says_before_the_choice_that_items_give_back_their_share(discounted):
    assert _form(discounted).items_note == (
        "The sale had a discount of ₦150.00 (10%) and VAT 7.5% on top: items give back their share "
        "of what the customer paid, shown before you confirm."
    )


def test_a_sale_with_nothing_between_items_and_total_has_no_note(receipt_factory):
    assert _form(receipt_factory()).items_note == ""


def test_one_plate_of_a_discounted_sale_says_why_it_gives_back_less(discounted):
    form = _form(discounted, item_0="1")
    assert form.is_valid(), form.errors
    plan = plan_refund(discounted, form.request)

    assert plan.amount == 48375  # the number the refund makes, not a second reckoning
    assert why_it_differs(discounted, plan) == (
        "The sale had a discount of ₦150.00 (10%) and VAT 7.5% on top; this item's share of them is "
        "-₦16.25, so the customer gets back ₦483.75, not ₦500.00."
    )


def test_a_charge_not_listed_as_an_item_is_named(receipt_factory):
    # No subtotal given: the ₦150.00 the total holds beyond the items is a charge.
    sale = receipt_factory(items=ITEMS_SOLD, total_amount=165000)
    form = _form(sale, item_0="2")
    assert form.is_valid(), form.errors

    assert why_it_differs(sale, plan_refund(sale, form.request)) == (
        "The sale had charges of ₦150.00 not listed as items; these items' share of it is ₦100.00, "
        "so the customer gets back ₦1,100.00, not ₦1,000.00."
    )


def test_the_last_items_give_back_all_that_is_left_tip_included(receipt_factory):
    sale = receipt_factory(
        items=ITEMS_SOLD[1:], subtotal_amount=50000, discount_amount=5000, tip_amount=2000, total_amount=47000
    )
    form = _form(sale, item_0="1", item_1="1")
    assert form.is_valid(), form.errors

    assert why_it_differs(sale, plan_refund(sale, form.request)) == (
        "These are the last of the sale's items, so the customer gets back all that is left of what they "
        "paid (the tip of ₦20.00 too): ₦470.00, where the items cost ₦500.00."
    )


def test_a_refund_that_gives_back_the_prices_needs_no_words(receipt_factory):
    sale = receipt_factory(items=ITEMS_SOLD, total_amount=150000)
    form = _form(sale, item_1="1")
    assert form.is_valid(), form.errors

    assert why_it_differs(sale, plan_refund(sale, form.request)) is None


def test_a_refund_of_an_amount_needs_no_words(discounted):
    form = _form(discounted, what=AMOUNT, amount="100")
    assert form.is_valid(), form.errors

    assert why_it_differs(discounted, plan_refund(discounted, form.request)) is None
