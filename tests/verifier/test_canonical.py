"""The canonical form is RFC 8785's, byte for byte (its example in section 3.2.2)."""

import pytest
from receco_verify.canonical import CanonicalFormError, canonicalize


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


def _random_value(rng, depth=0):
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.choice([None, True, False])
    if choice == 1:
        return rng.randrange(-(2**53) + 1, 2**53)
    if choice == 2:
        return rng.choice(
            [7.5, 0.075, 1e-4, 123.456, 5.0, -0.5, 1e15 + 0.5, 9007199254740991.0, 0.1 + 0.2, 1e16, 1e-5, 2.5e-7]
        )
    if choice == 3:
        return rng.uniform(-1e6, 1e6)
    if choice in (4, 5):
        alphabet = 'aZ09 "\\/\n\t\x00\x1f\x7f\u00e9\u20ac\ud7ff\ue000\uffff\U0001f600'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
    if choice == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "b", "kid", "\u20ac", "\ue000", "\U0001f600", "\uffff", "", "A", "total_amount"]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_the_fast_path_writes_the_reference_bytes_for_every_kind_of_value():
    import random

    from receco_verify.canonical import reference

    rng = random.Random(8785)
    for _ in range(20000):
        value = _random_value(rng)
        assert canonicalize(value) == reference(value), value
