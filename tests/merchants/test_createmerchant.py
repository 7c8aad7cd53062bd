import pytest
from django.core.management import CommandError, call_command

from merchants.models import Merchant

pytestmark = pytest.mark.django_db


def test_it_creates_a_merchant(capsys):
    call_command(
        "createmerchant",
        "lagos-grill",
        "--name",
        "Lagos Grill",
        "--logo",
        "https://cdn.example.com/l.png",
        "--accent-color",
        "#ABC",
        "--require-api-key",
    )
    merchant = Merchant.objects.get(string_id="lagos-grill")
    assert (merchant.name, merchant.logo_url, merchant.accent_color) == (
        "Lagos Grill",
        "https://cdn.example.com/l.png",
        "#aabbcc",
    )
    assert merchant.require_api_key is True
    assert merchant.is_test is False
    assert f"Created merchant lagos-grill (Lagos Grill), id {merchant.pk}" in capsys.readouterr().out


def test_it_records_the_registration_number_in_one_form():
    call_command("createmerchant", "lagos-grill", "--name", "Lagos Grill", "--registration-number", "rc 1234567")
    assert Merchant.objects.get(string_id="lagos-grill").registration_number == "RC1234567"


def test_it_refuses_a_registration_number_that_is_not_cacs():
    with pytest.raises(CommandError, match="registration_number: Enter a CAC registration number: RC, BN or IT"):
        call_command("createmerchant", "shop", "--name", "Shop", "--registration-number", "12345")
    assert not Merchant.objects.filter(string_id="shop").exists()


def test_test_prefixed_merchants_are_test_merchants():
    call_command("createmerchant", "test-kiosk", "--name", "Kiosk")
    assert Merchant.objects.get(string_id="test-kiosk").is_test is True


def test_it_refuses_a_bad_colour():
    with pytest.raises(CommandError, match="--accent-color must be a hex colour like #1a2b3c or #abc"):
        call_command("createmerchant", "shop", "--name", "Shop", "--accent-color", "red")


def test_it_refuses_a_duplicate_id(merchant):
    with pytest.raises(CommandError, match="string_id: Merchant with this Merchant id already exists."):
        call_command("createmerchant", merchant.string_id, "--name", "Again")


def test_it_refuses_a_bad_id():
    with pytest.raises(CommandError, match="string_id: Use 1 to 64 letters"):
        call_command("createmerchant", "has space", "--name", "Shop")


def test_a_registered_merchant_requires_its_key_by_default():
    call_command("createmerchant", "lagos-grill", "--name", "Lagos Grill")
    assert Merchant.objects.get(string_id="lagos-grill").require_api_key is True


def test_the_owner_may_let_the_pos_call_without_a_key():
    call_command("createmerchant", "lagos-grill", "--name", "Lagos Grill", "--no-require-api-key")
    assert Merchant.objects.get(string_id="lagos-grill").require_api_key is False


def test_a_test_merchant_never_requires_a_key():
    call_command("createmerchant", "test-kiosk", "--name", "Kiosk")
    assert Merchant.objects.get(string_id="test-kiosk").require_api_key is False


def test_it_records_the_legal_identity():
    call_command(
        "createmerchant", "lagos-grill", "--name", "Lagos Grill", "--legal-name", "Lagos Grill Ltd",
        "--address", "1 Marina\\nLagos Island", "--phone", "+234 1 234 5678",
        "--support-email", "help@grill.example.com",
        "--tax-id", "NG_TIN:12345678-0001", "--country", "ng", "--time-zone", "Africa/Lagos",
        "--return-policy", "7 days with the receipt.", "--receipt-footer", "Thank you!",
    )  # fmt: skip
    merchant = Merchant.objects.get(string_id="lagos-grill")
    assert (merchant.legal_name, merchant.address, merchant.tax_id_scheme, merchant.tax_id, merchant.country) == (
        "Lagos Grill Ltd",
        "1 Marina\nLagos Island",
        "NG_TIN",
        "12345678-0001",
        "NG",
    )
    assert (merchant.return_policy, merchant.receipt_footer) == ("7 days with the receipt.", "Thank you!")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--tax-id", "12345678", "--tax-id must be SCHEME:VALUE"),
        ("--time-zone", "Lagos", "time_zone: Enter a time zone name such as Africa/Lagos"),
        ("--country", "XX", "country: Enter a two-letter country code"),
        ("--support-email", "help@", "support_email: Enter a valid email address."),
    ],
)
def test_it_refuses_a_bad_identity(option, value, message):
    with pytest.raises(CommandError, match=message):
        call_command("createmerchant", "shop", "--name", "Shop", option, value)
