"""Receipt numbers (receipts.numbering): each receipt takes the next number of its series,
the merchant's, its till's or a test one, and a sale that is not stored takes none."""

import zoneinfo
from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from merchants.models import Merchant
from merchants.numbering import default_prefix
from receco.errors import Conflict
from receipts.creation import create_receipt
from receipts.models import Receipt, ReceiptSeries
from receipts.numbering import series_name, terminal_code
from receipts.validation import validate_sale
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _year() -> int:
    return timezone.now().astimezone(zoneinfo.ZoneInfo("Africa/Lagos")).year


@pytest.fixture
def mp(merchant):
    merchant.receipt_prefix = "MP"
    merchant.save()
    return merchant


def _sale(receipt_factory, n: int, **overrides) -> Receipt:
    return receipt_factory(token=f"rcpt_numbered_{n:06d}", short_code=None, **overrides)


def test_sales_take_the_next_numbers_of_the_merchants_series(mp, receipt_factory):
    first, second = _sale(receipt_factory, 1), _sale(receipt_factory, 2)
    assert first.receipt_number == f"MP-{_year()}-000001"
    assert second.receipt_number == f"MP-{_year()}-000002"
    assert Receipt.objects.get(pk=second.pk).receipt_number == f"MP-{_year()}-000002"  # stored, not only returned
    assert ReceiptSeries.objects.get(merchant=mp).last == 2


def test_a_merchant_without_a_prefix_is_numbered_from_its_id(merchant, receipt_factory):
    assert _sale(receipt_factory, 1).receipt_number == f"MAMAPU-{_year()}-000001"


def test_a_sale_that_names_its_till_is_numbered_in_the_tills_series(mp, receipt_factory):
    till = _sale(receipt_factory, 1, terminal_id="Till 3")
    other_till = _sale(receipt_factory, 2, terminal_id="till-4")
    shop = _sale(receipt_factory, 3)
    again = _sale(receipt_factory, 4, terminal_id="TILL3")
    assert till.receipt_number == f"MP-TILL3-{_year()}-000001"
    assert other_till.receipt_number == f"MP-TILL4-{_year()}-000001"
    assert shop.receipt_number == f"MP-{_year()}-000001"
    assert again.receipt_number == f"MP-TILL3-{_year()}-000002"


def test_test_receipts_are_numbered_apart_from_the_live_ones(mp, sale, receipt_factory):
    live = _sale(receipt_factory, 1)
    data = validate_sale({**sale, "token": "rcpt_testmode_000001", "short_code": None})
    test = create_receipt(mp, data, livemode=False).receipt
    assert live.receipt_number == f"MP-{_year()}-000001"
    assert test.receipt_number == f"TEST-MP-{_year()}-000001"
    assert _sale(receipt_factory, 2).receipt_number == f"MP-{_year()}-000002"


def test_a_test_merchants_first_sale_is_numbered_with_it(api, sale):
    status, body = api.post("createReceiptFromPOS", {**sale, "merchant_string_id": "test-kiosk"})
    assert status == 200, body
    receipt = Receipt.objects.get(token=sale["token"])
    assert receipt.receipt_number == f"TEST-TESTKI-{_year()}-000001"


def test_a_refund_takes_the_next_number_of_its_merchants_series(api, mp, live_key, receipt_factory):
    sale = _sale(receipt_factory, 1, terminal_id="Till 3")
    _sale(receipt_factory, 2)
    status, body = api.post("refundReceipt", {"token": sale.token, "amount": 1000}, **bearer(live_key))
    assert status == 200, body
    refund = Receipt.objects.get(token=body["result"]["data"]["token"])
    assert refund.receipt_number == f"MP-{_year()}-000002"


def test_a_replay_takes_no_number(mp, receipt_factory):
    first = _sale(receipt_factory, 1)
    assert _sale(receipt_factory, 1).pk == first.pk  # the same sale again: the receipt stored before
    assert _sale(receipt_factory, 2).receipt_number == f"MP-{_year()}-000002"


def test_a_refused_sale_leaves_no_gap(mp, sale, receipt_factory):
    _sale(receipt_factory, 1)
    with pytest.raises(Conflict):  # the token of another sale: its INSERT fails, its number goes back
        _sale(receipt_factory, 1, total_amount=1)
    assert _sale(receipt_factory, 2).receipt_number == f"MP-{_year()}-000002"
    assert sorted(Receipt.objects.values_list("number", flat=True)) == [1, 2]


def test_a_short_code_taken_leaves_no_gap(mp, receipt_factory):
    receipt_factory(token="rcpt_numbered_000001", short_code="K7P2QX")
    second = receipt_factory(token="rcpt_numbered_000002", short_code="K7P2QX")  # drawn again
    assert second.short_code != "K7P2QX"
    assert second.receipt_number == f"MP-{_year()}-000002"


def test_a_sale_inside_a_transaction_gives_its_number_back_when_it_fails(mp, receipt_factory):
    _sale(receipt_factory, 1)
    with transaction.atomic():
        with pytest.raises(Conflict):
            _sale(receipt_factory, 1, total_amount=1)
        assert _sale(receipt_factory, 2).receipt_number == f"MP-{_year()}-000002"


def test_no_number_is_stored_twice(mp, receipt_factory):
    first = _sale(receipt_factory, 1)
    second = _sale(receipt_factory, 2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Receipt.objects.filter(pk=second.pk).update(number=first.number)


def test_a_new_prefix_starts_a_new_series(mp, receipt_factory):
    _sale(receipt_factory, 1)
    mp.receipt_prefix = "MPF"
    mp.save()
    assert _sale(receipt_factory, 2).receipt_number == f"MPF-{_year()}-000001"


def test_receipts_stored_before_numbering_have_none(api, mp, receipt_factory):
    receipt = _sale(receipt_factory, 1)
    Receipt.objects.filter(pk=receipt.pk).update(number=None, number_series=None)
    status, body = api.get("getReceipt", {"token": receipt.token})
    assert status == 200
    assert body["result"]["data"]["receipt_number"] is None
    assert Receipt.objects.get(pk=receipt.pk).receipt_number is None


def test_the_year_is_the_merchants(merchant):
    new_year_in_lagos = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)  # 00:30 on 1 January in Lagos
    assert series_name(merchant, livemode=True, now=new_year_in_lagos) == "MAMAPU-2027"
    merchant.time_zone = "UTC"
    assert series_name(merchant, livemode=True, now=new_year_in_lagos) == "MAMAPU-2026"


def test_a_tills_code_is_its_letters_and_digits_in_capitals():
    assert terminal_code("Till 3") == "TILL3"
    assert terminal_code(" pos-01/a ") == "POS01A"
    assert terminal_code("Kàsà 1") == "KS1"
    assert terminal_code(None) == ""


@pytest.mark.parametrize(
    ("terminal_id", "message"),
    [
        ("--", "terminal_id: Must hold a letter or a digit: it names the till in the receipt number"),
        ("T" * 33, "terminal_id: Ensure this field has no more than 32 characters"),
        (3, "terminal_id: Must be a string"),
    ],
)
def test_a_terminal_id_the_service_cannot_number_by_is_refused(api, sale, terminal_id, message):
    status, body = api.post("createReceiptFromPOS", {**sale, "terminal_id": terminal_id})
    assert status == 400
    assert body["error"]["data"]["code"] == "INVALID_INPUT"
    assert body["error"]["message"] == message
    assert not Receipt.objects.exists()


def test_a_blank_terminal_id_is_none(api, mp, sale):
    status, body = api.post("createReceiptFromPOS", {**sale, "terminal_id": "  "})
    assert status == 200, body
    assert Receipt.objects.get().receipt_number == f"MP-{_year()}-000001"


def test_a_replay_with_another_till_is_another_sale(api, sale):
    assert api.post("createReceiptFromPOS", {**sale, "terminal_id": "T1"})[0] == 200
    status, body = api.post("createReceiptFromPOS", {**sale, "terminal_id": "T2"})
    assert status == 409
    assert body["error"]["message"] == "Token already used for a different receipt"


def test_a_sale_without_terminal_id_replays_as_before(api, sale):
    """terminal_id stays out of the fingerprint when absent: a sale stored before it existed replays."""
    assert api.post("createReceiptFromPOS", sale)[0] == 200
    assert api.post("createReceiptFromPOS", {**sale, "terminal_id": None})[0] == 200
    assert Receipt.objects.count() == 1


@pytest.mark.parametrize(("typed", "kept"), [("mp", "MP"), (" mp1 ", "MP1"), ("", "")])
def test_a_prefix_is_kept_in_capitals(merchant, typed, kept):
    merchant.receipt_prefix = typed
    merchant.full_clean()
    assert merchant.receipt_prefix == kept


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("M-P", "Use 1 to 10 capital letters or digits, such as MP: no spaces or dashes."),
        ("MAMA PUT", "Use 1 to 10 capital letters or digits, such as MP: no spaces or dashes."),
        ("ABCDEFGHIJK", "Use 1 to 10 capital letters or digits, such as MP: no spaces or dashes."),
        ("test", "TEST begins the numbers of test receipts: choose another prefix."),
    ],
)
def test_a_prefix_that_could_read_as_another_series_is_refused(merchant, typed, message):
    merchant.receipt_prefix = typed
    with pytest.raises(ValidationError) as refused:
        merchant.full_clean()
    assert message in refused.value.message_dict["receipt_prefix"]


@pytest.mark.parametrize(
    ("string_id", "prefix"),
    [("mama-put", "MAMAPU"), ("test-kiosk", "TESTKI"), ("a.b", "AB"), ("test", "R"), ("7up", "7UP")],
)
def test_the_default_prefix_is_the_first_letters_and_digits_of_the_id(string_id, prefix):
    assert default_prefix(string_id) == prefix
    assert Merchant(string_id=string_id).number_prefix == prefix
