import pytest
from django.core.exceptions import ValidationError

from merchants.registration import normalize_registration_number, validate_registration_number


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("RC1234567", "RC1234567"),
        ("RC 1234567", "RC1234567"),
        (" rc-1234567 ", "RC1234567"),
        ("RC: 1234567", "RC1234567"),
        ("BN 2345678", "BN2345678"),
        ("it/98765", "IT98765"),
        ("", ""),
        ("  RC 12A ", "RC 12A"),  # unreadable: as given, trimmed, for the validator to refuse
    ],
)
def test_it_is_kept_in_one_form(typed, kept):
    assert normalize_registration_number(typed) == kept


@pytest.mark.parametrize("value", ["1234567", "RC", "RC1234567890", "XY1234567", "RC 1234567", "rc1234567"])
def test_other_forms_are_refused(value):
    with pytest.raises(ValidationError, match="Enter a CAC registration number: RC, BN or IT followed by its digits"):
        validate_registration_number(value)


@pytest.mark.parametrize("value", ["RC1", "RC123456789", "BN2345678", "IT98765"])
def test_cac_forms_are_accepted(value):
    validate_registration_number(value)
