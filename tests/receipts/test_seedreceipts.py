import random
import re
import zoneinfo
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from merchants.models import Merchant
from receipts import seed_writer, seeding
from receipts.codes import SHORT_CODE_RE, TOKEN_RE
from receipts.models import Receipt, ReceiptSeries
from receipts.validation import sale_fingerprint
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db


def test_it_creates_realistic_readable_receipts(merchant, api, capsys):
    call_command("seedreceipts", merchant.string_id, "250", "--batch-size", "100")
    receipts = list(Receipt.objects.all())
    assert len(receipts) == 250
    assert len({r.short_code for r in receipts}) == 250
    for receipt in receipts:
        assert TOKEN_RE.match(receipt.token)
        assert SHORT_CODE_RE.match(receipt.short_code)
        assert receipt.total_amount == sum(item["total_price"] for item in receipt.items)
    status, body = api.get("getReceipt", {"token": receipts[0].short_code})
    assert status == 200
    assert body["result"]["data"]["merchant_name"] == "Mama Put Kitchen"
    assert "Created 250 receipts for mama-put" in capsys.readouterr().out


def test_its_tokens_and_codes_have_the_forms_the_service_gives(merchant):
    call_command("seedreceipts", merchant.string_id, "200")
    for receipt in Receipt.objects.all():
        # The sale's time in milliseconds, in base 36, then six random characters.
        when = re.fullmatch(r"rcpt_([0-9a-z]+)_[0-9a-z]{6}", receipt.token).group(1)
        assert abs(int(when, 36) - receipt.transaction_date.timestamp() * 1000) < 1
        # Codes that begin with a digit are those derived from a token (receipts.codes).
        assert receipt.short_code[0].isalpha()
        assert receipt.transaction_date <= receipt.created_at <= receipt.transaction_date + timedelta(minutes=2)


def test_each_fingerprint_is_that_of_the_sale_it_stands_for(merchant):
    call_command("seedreceipts", merchant.string_id, "200")
    for receipt in Receipt.objects.all():
        sale = {
            "token": receipt.token,
            "merchant_string_id": merchant.string_id,
            "merchant_name": receipt.merchant_name,
            "total_amount": receipt.total_amount,
            "currency": receipt.currency,
            "transaction_date": receipt.transaction_date,
            "items": receipt.items,
            "category": receipt.category,
            "payment_method": receipt.payment_method,
            "location": receipt.location,
            "status": receipt.status,
            "customer_email": receipt.customer_email,
            "customer_phone": receipt.customer_phone,
            **(receipt.details or {}),
        }
        assert receipt.fingerprint == sale_fingerprint(sale)


def test_it_mixes_vat_lines_cards_and_contacts_as_sales_have_them(merchant):
    call_command("seedreceipts", merchant.string_id, "400")
    receipts = list(Receipt.objects.all())
    with_vat = [r for r in receipts if r.detail("tax_lines")]
    assert 80 < len(with_vat) < 240  # 40% of them
    for receipt in with_vat:
        (line,) = receipt.detail("tax_lines")
        assert line["name"] == "VAT"
        assert line["inclusive"] is True
        assert line["taxable_amount"] + line["tax_amount"] == receipt.total_amount
    for receipt in receipts:
        card = receipt.detail("payment_details")
        assert (card is not None) == (receipt.payment_method == "card")
        if card:
            assert card["card_brand"] in ("Verve", "Mastercard", "Visa")
            assert re.fullmatch(r"[0-9]{4}", card["card_last4"])
    phones = [r.customer_phone for r in receipts if r.customer_phone]
    assert 30 < len(phones) < 140  # 20% of them
    assert all(re.fullmatch(r"\+2348[0-9]{9}", phone) for phone in phones)
    assert any(r.customer_email for r in receipts)


def _series_names(merchant, days):
    """The series a merchant's receipts of the last ``days`` days are numbered in: one a
    year, the years read in the merchant's time zone (Africa/Lagos, UTC+1)."""
    zone = zoneinfo.ZoneInfo(merchant.time_zone)
    now = timezone.now()
    years = range((now - timedelta(days=days)).astimezone(zone).year, now.astimezone(zone).year + 1)
    return {f"MAMAPU-{year}" for year in years}


def test_its_receipts_are_numbered_gaplessly_and_the_series_agree(merchant):
    call_command("seedreceipts", merchant.string_id, "300", "--merchants", "3")
    call_command("seedreceipts", merchant.string_id, "30", "--merchants", "3")
    for owner in Merchant.objects.all():
        # Sales of the last 90 days (the default): one series, two from January to March.
        series = {s.name: s.last for s in ReceiptSeries.objects.filter(merchant=owner)}
        assert set(series) == _series_names(owner, 90)
        assert sum(series.values()) == 110
        for name, last in series.items():
            in_series = Receipt.objects.filter(merchant=owner, number_series=name)
            assert sorted(in_series.values_list("number", flat=True)) == list(range(1, last + 1))


def test_a_year_turning_starts_its_series_again(merchant):
    call_command("seedreceipts", merchant.string_id, "400", "--days", "400")
    series = {s.name: s.last for s in ReceiptSeries.objects.filter(merchant=merchant)}
    # 400 days span two of the merchant's years, or three in January.
    assert set(series) == _series_names(merchant, 400)
    assert sum(series.values()) == 400
    zone = zoneinfo.ZoneInfo(merchant.time_zone)
    for name, last in series.items():
        in_series = Receipt.objects.filter(number_series=name)
        assert sorted(in_series.values_list("number", flat=True)) == list(range(1, last + 1))
        # Numbered in the order they were stored, each in the year it was stored.
        by_time = list(in_series.order_by("created_at").values_list("number", flat=True))
        assert by_time == sorted(by_time)
        assert {r.created_at.astimezone(zone).year for r in in_series} == {int(name[-4:])}


def test_it_spreads_receipts_over_more_merchants_made_like_the_first(merchant, capsys):
    merchant.is_test = True
    merchant.save()
    call_command("seedreceipts", merchant.string_id, "100", "--merchants", "4")
    counts = {m.string_id: m.receipts.count() for m in Merchant.objects.all()}
    assert counts == {"mama-put": 25, "mama-put-0002": 25, "mama-put-0003": 25, "mama-put-0004": 25}
    assert set(Merchant.objects.values_list("is_test", "require_api_key")) == {(True, False)}
    assert not Receipt.objects.filter(livemode=True).exists()
    assert "Created 100 receipts for mama-put and 3 more merchants in " in capsys.readouterr().out


def test_it_adds_to_existing_receipts(merchant):
    call_command("seedreceipts", merchant.string_id, "20")
    call_command("seedreceipts", merchant.string_id, "20")
    assert Receipt.objects.count() == 40


def test_its_receipts_enter_the_log_as_any_receipt(merchant, client, capsys):
    call_command("seedreceipts", merchant.string_id, "30")
    receipt = Receipt.objects.first()
    page = client.get(f"/app/receipt/{receipt.token}")
    assert page.status_code == 200
    assert "Not yet in the public receipt log" in page.content.decode()
    append()
    call_command("verifylog")
    assert "OK 30 entries and 1 checkpoints checked: no problem" in capsys.readouterr().out


def test_it_refuses_an_unknown_merchant():
    with pytest.raises(CommandError, match="No merchant 'ghost': create it with createmerchant first"):
        call_command("seedreceipts", "ghost", "10")


def test_it_refuses_more_merchants_than_receipts(merchant):
    with pytest.raises(CommandError, match="--merchants must be between 1 and count"):
        call_command("seedreceipts", merchant.string_id, "10", "--merchants", "11")


def _schema() -> list:
    """The table's indexes and constraints, by name and then definition: a unique
    constraint and the index behind it share a name, and a name alone left their order
    to the plan."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'receipts_receipt'"
            " UNION ALL SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'receipts_receipt'::regclass ORDER BY 1, 2"
        )
        return cursor.fetchall()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_indexes_dropped_for_a_large_seed_come_back_as_the_migrations_made_them(merchant, monkeypatch):
    before = _schema()
    monkeypatch.setattr(seed_writer, "REBUILD_AT", 100)
    call_command("seedreceipts", merchant.string_id, "150", "--merchants", "2")
    assert _schema() == before
    assert len(before) == 18  # three fewer since receipts 0011, and the item names' trigram index of 0013
    assert Receipt.objects.count() == 150


@pytest.mark.postgres
def test_a_short_code_already_taken_is_drawn_again(merchant, receipt_factory):
    # The run's first receipt would take the code and token that the same draws give here.
    generator = seeding.Generator.new(50, random.Random(7))
    with connection.cursor() as cursor:
        cursor.execute(seeding.DIGITS_TABLE)
        cursor.execute("INSERT INTO seed_digits VALUES (%s, %s)", seeding.digit_tables())
        cursor.execute(f"SELECT {generator.short_code('0')}")
        (code,) = cursor.fetchone()
        cursor.execute("DROP TABLE seed_digits")
    taken = receipt_factory(short_code=code)
    now = timezone.now()
    seed_writer.insert_generated([(merchant, 50)], now - timedelta(days=1), now, random.Random(7))
    assert Receipt.objects.count() == 51
    assert Receipt.objects.get(short_code=code) == taken
    assert len(set(Receipt.objects.values_list("short_code", flat=True))) == 51


@pytest.mark.postgres
def test_receipts_seeded_into_an_empty_table_are_stored_frozen(merchant):
    # COPY FREEZE marks every page visible to all as it writes it: ANALYZE counts them.
    call_command("seedreceipts", merchant.string_id, "300")
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpages, relallvisible FROM pg_class WHERE oid = 'receipts_receipt'::regclass")
        pages, visible = cursor.fetchone()
    assert pages > 0
    assert visible == pages


@pytest.mark.postgres
def test_receipts_seeded_beside_others_are_stored_as_any_row(merchant, receipt_factory):
    receipt_factory()
    call_command("seedreceipts", merchant.string_id, "300")
    with connection.cursor() as cursor:
        cursor.execute("SELECT relallvisible FROM pg_class WHERE oid = 'receipts_receipt'::regclass")
        assert cursor.fetchone() == (0,)
    assert Receipt.objects.count() == 301
