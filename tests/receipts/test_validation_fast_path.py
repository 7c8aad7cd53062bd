"""validate_sale reads a well-formed sale with plain code before trying SaleSerializer.

That fast path must accept only what the serializer accepts and return exactly what it
returns; for anything else it gives up, and the serializer names the bad fields. These
tests compare the two on the SDKs' sale and on thousands of variations of it.
"""

import copy
import random

import pytest

from receipts.validation import SaleSerializer, _well_formed_sale, validate_sale

TEXT = [
    None, "", "   ", " padded ", "x", "X" * 3, "x" * 6, "x" * 7, "x" * 32, "x" * 33, "x" * 40, "x" * 41,
    "x" * 50, "x" * 51, "x" * 64, "x" * 65, "x" * 100, "x" * 101, "x" * 200, "x" * 201, "x" * 254, "x" * 255,
    "x" * 500, "x" * 501, "a\x00b", "Fanta 50cl – é", "\ud83d", "\u00a0spaced\u00a0", "\n", 0, 1, 1.5, True,
    False, [], {}, ["a"], {"a": 1},
]  # fmt: skip
SPECIFIC = [
    "rcpt_mfx3k2a1_q8z0lp", "k7p2qx8s0m1n2p3q4r5s6t7u", "bad token!", "short", "K7P2QX", " k7p2qx ", "K7P2Q",
    "K7P2QX1", "k7-2qx", "test-shop", "mama-put", "-bad", "shop/1", "x" * 64, "https://cdn.example.com/l.png",
    "HTTP://EXAMPLE.COM", "ftp://example.com/l.png", "https://", "https://exa mple.com", "#abc", "#ABCDEF",
    "#12345", "#ggg", "abc", "NGN", "ngn", "usd", "NG", "NGNN", "N1N", "2026-11-22T10:15:00.000Z",
    "2026-11-22T11:15:00+01:00", "2026-11-22T10:15:00", " 2026-11-22 10:15 ", "2026-13-01T00:00:00Z", "yesterday",
    "completed", " refunded ", "customer@example.com", "Customer@EXAMPLE.com", "bad@", "@example.com",
    "+2348031234589", "0803 123 4589", "12", "+1 415 555 2671", "not a phone",
]  # fmt: skip
INTEGERS = [None, 0, 1, -1, 2, 1_000_000, 1_000_001, 10**15, 10**15 + 1, 1.0, 2.5, "12", True, False, [], {}]
SALE_TEXT_FIELDS = [
    "token", "short_code", "merchant_string_id", "merchant_name", "merchant_logo", "accent_color", "currency",
    "transaction_date", "category", "payment_method", "location", "status", "customer_email", "customer_phone",
]  # fmt: skip
ITEM_TEXT_FIELDS = ["name", "sku"]
ITEM_INTEGER_FIELDS = ["quantity", "unit_price", "total_price"]
ABSENT = object()


def _by_serializer(data):
    serializer = SaleSerializer(data=copy.deepcopy(data))
    if not serializer.is_valid():
        return None
    sale = dict(serializer.validated_data)
    sale["items"] = [dict(item) for item in sale["items"]]
    return sale


def _with(data: dict, name: str, value) -> dict:
    changed = copy.deepcopy(data)
    if value is ABSENT:
        changed.pop(name, None)
    else:
        changed[name] = value
    return changed


def _variants(sale: dict):
    for name in SALE_TEXT_FIELDS:
        for value in [ABSENT, *TEXT, *SPECIFIC]:
            yield _with(sale, name, value)
    for value in [ABSENT, *INTEGERS]:
        yield _with(sale, "total_amount", value)
    for value in [ABSENT, None, [], {}, "items", [None], ["x"], sale["items"] * 250, sale["items"] * 251]:
        yield _with(sale, "items", value)
    for index in range(len(sale["items"])):
        for name, values in [(n, TEXT + SPECIFIC) for n in ITEM_TEXT_FIELDS] + [
            (n, INTEGERS) for n in ITEM_INTEGER_FIELDS
        ]:
            for value in [ABSENT, *values]:
                items = copy.deepcopy(sale["items"])
                items[index] = _with(items[index], name, value)
                yield _with(sale, "items", items)
    yield {**sale, "unknown": "ignored", "location": {"nested": True}}


def _assert_agrees(data):
    fast = _well_formed_sale(copy.deepcopy(data))
    if fast is not None:
        assert fast == _by_serializer(data), data


def test_the_sdks_sale_takes_the_fast_path(sale):
    fast = _well_formed_sale(copy.deepcopy(sale))
    assert fast is not None
    assert fast == _by_serializer(sale)
    assert validate_sale(copy.deepcopy(sale)) == fast


@pytest.mark.django_db
def test_it_agrees_with_the_serializer_on_every_single_change(sale):
    taken = 0
    for data in _variants(sale):
        _assert_agrees(data)
        taken += _well_formed_sale(copy.deepcopy(data)) is not None
    assert taken > 200  # the fast path is really used, not always refused


@pytest.mark.django_db
def test_it_agrees_with_the_serializer_on_random_sales(sale):
    rng = random.Random(20261122)
    for _ in range(1500):
        data = copy.deepcopy(sale)
        for name in rng.sample(SALE_TEXT_FIELDS, 3):
            value = rng.choice([ABSENT, *TEXT, *SPECIFIC])
            data = _with(data, name, value)
        if rng.random() < 0.3:
            data = _with(data, "total_amount", rng.choice(INTEGERS))
        if rng.random() < 0.3:
            item = rng.choice(data["items"]) if isinstance(data.get("items"), list) else {}
            item[rng.choice(ITEM_TEXT_FIELDS + ITEM_INTEGER_FIELDS)] = rng.choice(TEXT + INTEGERS)
        _assert_agrees(data)
