"""The service's canonical bytes (receco.lib.canonical) are the verifier's, byte for byte:
what the log signs is what every verifier rebuilds."""

import random

import pytest
from receco_verify.canonical import CanonicalFormError, reference

from receco.lib.canonical import canonicalize
from tests.verifier.support import random_value

# Strings a receipt holds: no escapes, some characters beyond ASCII, none beyond the BMP.
RECEIPT_TEXT = "aZ09 -./:\u00e9\u20a6\u20ac\u0416\u4e2d\ud7ff"


@pytest.mark.parametrize("alphabet", ["plain", "with escapes and characters beyond the BMP"])
def test_every_kind_of_value_is_written_as_the_reference_writes_it(alphabet):
    rng = random.Random(8785)
    kwargs = {"alphabet": RECEIPT_TEXT} if alphabet == "plain" else {}
    for _ in range(20000):
        value = random_value(rng, **kwargs)
        try:
            expected = reference(value)
        except (ValueError, TypeError):
            with pytest.raises(CanonicalFormError):
                canonicalize(value)
            continue
        assert canonicalize(value) == expected, value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"rate": 7.5, "whole": 7.0, "zero": -0.0}, b'{"rate":7.5,"whole":7,"zero":0}'),
        ([1e-6, 1.5e-7, 1e16, 1e21, 0.0001], b"[0.000001,1.5e-7,10000000000000000,1e+21,0.0001]"),
        ({"\uffff": 1, "\U0001f600": 2, "\u20a6": 3}, '{"\u20a6":3,"\U0001f600":2,"\uffff":1}'.encode()),
        ({"quoted": 'say "7.0e5"', "n": 9007199254740991}, b'{"n":9007199254740991,"quoted":"say \\"7.0e5\\""}'),
        ({"bool": [True, False, None], "text": "a\nb\u007f"}, b'{"bool":[true,false,null],"text":"a\\nb\x7f"}'),
        (7.0, b"7"),
        ("\u20ac", '"\u20ac"'.encode()),
    ],
)
def test_the_forms_json_writers_disagree_on_are_written_as_rfc_8785_says(value, expected):
    assert canonicalize(value) == expected == reference(value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"amount": 2**53}, "9007199254740992 exceeds safe integer domain for JSON floats"),
        ({"rate": float("inf")}, "inf is not representable in JCS"),
        ({1: "a key that is not a string"}, "object keys must be strings"),
    ],
)
def test_what_has_no_canonical_form_is_refused_as_the_verifier_refuses_it(value, message):
    with pytest.raises(CanonicalFormError) as refused:
        canonicalize(value)
    assert str(refused.value).startswith(message)
