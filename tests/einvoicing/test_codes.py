"""Codes chosen from the lists NRS serves, by what they name, loaded once a day."""

import pytest

from einvoicing import codes, mbs
from einvoicing.invoices import Incomplete


@pytest.fixture
def client(nrs, taxpayer):
    return mbs.Client(nrs.url, taxpayer.api_key, taxpayer.api_secret)


def test_the_invoice_types_are_chosen_by_name_from_nrss_list_not_by_number(client):
    # NRS's sandbox lists 381 as "Commercial Invoice" and 380 as "Credit Note", the reverse
    # of UN/EDIFACT 1001, which third parties copy.
    assert codes.invoice_type(client, credit_note=False) == "381"
    assert codes.invoice_type(client, credit_note=True) == "380"


def test_a_list_is_loaded_once_and_kept(client, nrs):
    codes.invoice_type(client, credit_note=False)
    codes.invoice_type(client, credit_note=True)
    codes.payment_means(client, "card")
    assert nrs.paths() == [
        ("GET", "/api/v1/invoice/resources/invoice-types"),
        ("GET", "/api/v1/invoice/resources/payment-means"),
    ]


@pytest.mark.parametrize(
    ("method", "code"),
    [("card", "43"), ("POS", "43"), ("Cash", "10"), ("bank transfer", "30"), ("mobile money", None), (None, None)],
)
def test_the_payment_means_is_what_the_pos_word_names(client, method, code):
    assert codes.payment_means(client, method) == code


@pytest.mark.parametrize(
    ("name", "rate", "category"),
    [("VAT", 7.5, "STANDARD_VAT"), ("Value added tax", 0, "ZERO_VAT"), ("Local sales tax", 2.3, "LOCAL_SALES_TAX")],
)
def test_a_tax_line_takes_the_category_its_name_spells_or_vats(client, name, rate, category):
    assert codes.tax_category(client, name, rate) == category


def test_a_tax_line_that_names_no_category_cannot_be_reported(client):
    with pytest.raises(
        Incomplete, match=r"^The tax line 'Service charge' names no tax category NRS lists \(ALCOHOL_EXCISE_TAX"
    ):
        codes.tax_category(client, "Service charge", 10)


def test_a_list_nrs_does_not_serve_is_not_kept(client, nrs):
    nrs.fail("/api/v1/invoice/resources/invoice-types", 502)
    with pytest.raises(mbs.Unavailable):
        codes.invoice_type(client, credit_note=False)
    assert codes.invoice_type(client, credit_note=False) == "381"  # asked again, and served
