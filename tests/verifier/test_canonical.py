"""The canonical form is RFC 8785's, byte for byte (its example in section 3.2.2)."""

import pytest
from receco_verify.canonical import CanonicalFormError, canonicalize

from tests.verifier.support import random_value


def test_the_rfc_8785_example_canonicalizes_as_the_rfc_prints_it():
    value = {
        "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "literals": [None, True, False],
    }
    expected = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' + (
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonicalize(value) == expected.encode("utf-8")


def test_keys_sort_by_utf16_code_units_not_by_code_points():
    # U+1F600 is D83D DE00 in UTF-16, before U+FFFF; by code point it would come after.
    assert canonicalize({"\uffff": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uffff":1}'.encode()


def test_what_has_no_canonical_form_is_refused():
    with pytest.raises(CanonicalFormError):
        canonicalize({"amount": 2**53 + 1})
    with pytest.raises(CanonicalFormError):
        canonicalize({"amount": float("nan")})


def test_the_fast_path_writes_the_reference_bytes_for_every_kind_of_value():
    import random

    from receco_verify.canonical import reference

    rng = random.Random(8785)
    for _ in range(20000):
        value = random_value(rng)
        assert canonicalize(value) == reference(value), value
