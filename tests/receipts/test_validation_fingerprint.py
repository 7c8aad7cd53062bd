"""A sale's fingerprint (receipts.validation.sale_fingerprint) stays what it was when the
first receipts were stored: the SHA-256 of the sale's JSON as the standard library writes
it. orjson writes it for most sales, faster; these tests pin the digests of sales stored
before, and compare the two writers on the sales where they could differ."""

import hashlib
import json
import random

import pytest

from receipts.validation import _canonical, _json_default, sale_fingerprint, validate_sale

SALE = {
    "merchant_string_id": "mama-put",
    "token": "rcpt_pinned01_aaaaaa",
    "total_amount": 2500,
    "transaction_date": "2026-11-22T10:15:00+01:00",
    "items": [{"name": "Jollof rice", "quantity": 1, "unit_price": 2500, "total_price": 2500, "sku": "JR-1"}],
}
ITEM = {"name": "Ẹ̀wà agoyin", "quantity": 1, "unit_price": 2500, "total_price": 2500}
VAT = {"name": "VAT", "rate": 0.00001, "taxable_amount": 2500, "tax_amount": 0}

# Digests the code before orjson gave these sales (commit f3e98be): receipts stored with them
# must still match their replays.
PINNED = {
    "plain": (SALE, "01e3841955acc68ace3a96da31a65c64bf7584cd1409809f4dba65f28dd2d3ed"),
    "beyond ASCII": (
        {**SALE, "location": "Lagos ₦ café", "items": [ITEM]},
        "36e57af5a80f382087e5118e0f4bb5ce0777917d5876477470bf7cc6aa351c65",
    ),
    "a tax line's small rate": (
        {**SALE, "subtotal_amount": 2500, "tax_lines": [VAT], "terminal_id": "Till 3"},
        "a83493ae78ae617b28c51f2f69290191ea4094d78d39ab4282692258f3ec885f",
    ),
    "DEL and a control character": (
        {**SALE, "category": "a\x7fb\x01c"},
        "e3ecd9df6cf8372dc60eea51e2b5e61bc52e46765dfc0ed34616b347635b3918",
    ),
}


@pytest.mark.parametrize("name", PINNED)
def test_a_sale_has_the_fingerprint_it_had_before_orjson(name):
    sale, digest = PINNED[name]
    assert sale_fingerprint(validate_sale(sale)) == digest


def _standard(content: dict) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=_json_default).encode()


TEXTS = [
    "",
    "plain",
    'quote " and \\ and /',
    "tab\tnew\nline\r",
    "\x00\x01\x1f",
    "DEL \x7f",
    "café",
    "₦",
    "😀",
    "\u2028",
]
NUMBERS = [0, 1, -1, 2**53, 2**63 - 1, 2**63, 2**64, 10**30, 0.5, 1e-05, 1e16, 7.5, True, False, None]


def test_the_two_writers_write_the_same_bytes_for_any_content():
    """Where orjson writes otherwise, or refuses (an integer beyond 64 bits), the standard
    library writes: the bytes are its bytes. Not-a-number only in tax lines, the one place
    a sale holds floats."""
    rng = random.Random(25)
    for _ in range(3000):
        content = {
            "token": rng.choice(TEXTS),
            "total_amount": rng.choice(NUMBERS),
            "items": [{"name": rng.choice(TEXTS), "quantity": rng.choice(NUMBERS)} for _ in range(rng.randrange(3))],
            "tax_lines": rng.choice([None, [{"rate": rng.choice([*NUMBERS, float("nan"), float("inf")])}]]),
            "details": rng.choice([None, {"b": rng.choice(TEXTS), "a": rng.choice(NUMBERS)}]),
        }
        assert _canonical(content) == _standard(content), content


def test_an_ascii_sale_is_written_by_orjson(monkeypatch):
    """The fast way is the one a plain sale takes (the standard library is not called)."""
    sale = validate_sale(SALE)
    monkeypatch.setattr(json, "dumps", lambda *args, **kwargs: pytest.fail("the standard library wrote it"))
    assert sale_fingerprint(sale) == PINNED["plain"][1]
    assert hashlib.sha256(_canonical({"a": 1})).hexdigest() == hashlib.sha256(b'{"a":1}').hexdigest()
