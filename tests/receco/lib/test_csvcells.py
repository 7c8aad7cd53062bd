"""CSV cells a spreadsheet opens as text (receco.lib.csvcells): the guard against CSV
injection of the dashboard's export of sales and the customer's download."""

import pytest

from receco.lib.csvcells import safe_cell


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+2348031234567", "'+2348031234567"),
        ("-5", "'-5"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("\nx", "'\nx"),
        ("Mama Put", "Mama Put"),
        ("₦1,300.00", "₦1,300.00"),
        ("1300.00", "1300.00"),
        (130000, 130000),
        (-5, -5),
        ("", ""),
    ],
)
def test_text_that_could_start_a_formula_gets_an_apostrophe(value, expected):
    assert safe_cell(value) == expected
