"""The shop's details page in plain words (dashboard.merchant_form, dashboard.plain_words):
"Shop id" and "Tax ID type" with the API's names behind a "Details", the tax ID's type a
choice of names stored as its code."""

import pytest

from tests.dashboard.test_admin_merchants import _change, _form

pytestmark = pytest.mark.django_db


@pytest.fixture
def nigerian(merchant):
    merchant.tax_id_scheme, merchant.tax_id = "NG_TIN", "12345678-0001"
    merchant.save()
    return merchant


def test_an_owner_reads_the_shops_codes_in_words(client, owner, nigerian):
    client.force_login(owner)
    html = client.get(_change(nigerian)).content.decode()

    assert "<label>Shop id:</label>" in html
    assert (
        'The id your till or POS system sends with every sale.<details class="technical"><summary>Details</summary>'
        "In the API: merchant_string_id.</details>"
    ) in html
    assert '<label for="id_tax_id_scheme">Tax ID type:</label>' in html
    assert '<option value="NG_TIN" selected>Nigerian Tax ID (TIN)</option>' in html
    assert '<label class="inline" for="id_tax_id">Tax ID:</label>' in html
    assert "Merchant id" not in html
    assert "Tax identifier" not in html


def test_the_tax_id_type_is_chosen_by_name_and_kept_as_its_code(client, owner, nigerian):
    client.force_login(owner)
    response = client.post(_change(nigerian), _form(nigerian, tax_id_scheme="GH_TIN", tax_id="C0001234567"))

    assert response.status_code == 302
    nigerian.refresh_from_db()
    assert nigerian.tax_id_scheme == "GH_TIN"


def test_a_scheme_not_listed_is_kept(client, owner, merchant):
    merchant.tax_id_scheme, merchant.tax_id = "US_EIN", "12-3456789"
    merchant.save()
    client.force_login(owner)
    assert '<option value="US_EIN" selected>US_EIN</option>' in client.get(_change(merchant)).content.decode()

    response = client.post(_change(merchant), _form(merchant, tax_id_scheme="US_EIN", tax_id="12-3456789"))

    assert response.status_code == 302
    merchant.refresh_from_db()
    assert merchant.tax_id_scheme == "US_EIN"


def test_a_member_reads_the_tax_id_type_in_words(client, member, nigerian):
    client.force_login(member)
    html = client.get(_change(nigerian)).content.decode()

    assert "<label>Tax ID type:</label>" in html
    assert '<div class="readonly">Nigerian Tax ID (TIN)</div>' in html
    assert "NG_TIN<" not in html
