import pytest

from receipts.money import format_amount, plain_amount


@pytest.mark.parametrize(
    ("minor", "currency", "expected"),
    [
        (130000, "NGN", "₦1,300.00"),
        (5, "NGN", "₦0.05"),
        (0, "NGN", "₦0.00"),
        (123456789012, "NGN", "₦1,234,567,890.12"),
        (1999, "USD", "$19.99"),
        (1050, "EUR", "€10.50"),
        (250000, "GHS", "GH₵2,500.00"),
        (1500, "JPY", "¥1,500"),
        (1500, "jpy", "¥1,500"),
        (120000, "XOF", "CFA\u00a0120,000"),
        (1234, "KWD", "KWD\u00a01.234"),
        (100000, "KES", "KSh\u00a01,000.00"),
        (123456, "ABC", "ABC\u00a01,234.56"),
        (-50000, "NGN", "-₦500.00"),
    ],
)
def test_it_formats_minor_units(minor, currency, expected):
    assert format_amount(minor, currency) == expected


def test_it_writes_the_code_when_asked():
    assert format_amount(130000, "NGN", symbol=False) == "NGN 1,300.00"
    assert format_amount(1500, "JPY", symbol=False) == "JPY 1,500"


@pytest.mark.parametrize(
    ("minor", "currency", "expected"),
    [(134000, "NGN", "1340.00"), (5, "NGN", "0.05"), (0, "NGN", "0.00"), (-50000, "NGN", "-500.00"),
     (1500, "JPY", "1500"), (1234, "KWD", "1.234"), (123456789012, "NGN", "1234567890.12")],
)  # fmt: skip
def test_a_plain_amount_is_a_number_a_spreadsheet_reads(minor, currency, expected):
    assert plain_amount(minor, currency) == expected
