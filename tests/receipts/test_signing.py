"""What a receipt's signature covers (receipts.signing): the fiscal content from its own
row, from version 2 its number, from version 3 its merchant's checked identity and a
refund's share of its sale's tax and card; never the customer's contact; refunds and voids
name their sale."""

from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.db.models import F
from receco_verify.canonical import canonicalize

from receco.lib.signingkeys import parse
from receipts import refunds
from receipts.models import Receipt
from receipts.signing import ContentRow, Identity, receipt_content, sign, void_content


def _refund(sale, **request):
    body = {"token": sale.token, "refund_token": "rcpt_refund01_aaaaaa", **request}
    return refunds.refund(sale, refunds.validate_refund(body), keyed=True)


@pytest.fixture
def keys():
    from receco.lib.signingkeys import keyring

    return keyring()


def test_a_sales_content_is_its_fiscal_fields_and_nothing_of_the_customer(receipt_factory, keys):
    receipt = receipt_factory(
        customer_email="ada@example.com",
        customer_phone="+2348031234567",
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    )
    content = receipt_content(receipt, "mama-put", keys.kid)
    assert receipt.receipt_number.startswith("MAMAPU-")
    assert receipt.receipt_number.endswith("-000001")
    assert content == {
        "v": 3,
        "kid": keys.kid,
        "type": "sale",
        "token": "rcpt_mfx3k2a1_q8z0lp",
        "short_code": "K7P2QX",
        "number": receipt.receipt_number,
        "livemode": True,
        "merchant": {"id": "mama-put", "name": "Mama Put Kitchen", "location": "Lekki Phase 1", "identity": None},
        "transaction_date": "2026-11-22T10:15:00.000Z",
        "issued_at": content["issued_at"],
        "currency": "NGN",
        "total_amount": 130000,
        "subtotal_amount": 130000,
        "discount_amount": None,
        "tip_amount": None,
        "items": [
            {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Chapman", "quantity": 1, "unit_price": 30000, "total_price": 30000},
        ],
        "tax_lines": [{"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}],
        "payment": {"method": "card", "card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        "refund_of": None,
    }
    canonical = canonicalize(content)
    assert b"ada@example.com" not in canonical
    assert b"2348031234567" not in canonical


def test_version_1_is_the_same_content_without_the_number(receipt_factory, keys):
    receipt = receipt_factory()
    first = receipt_content(receipt, "mama-put", keys.kid, version=1)
    second = receipt_content(receipt, "mama-put", keys.kid, version=2)
    assert (first["v"], "number" in first) == (1, False)
    assert {**first, "v": 2, "number": receipt.receipt_number} == second


def test_version_3_adds_the_merchants_checked_identity(receipt_factory, keys):
    receipt = receipt_factory()
    checked = Identity("Mama Put Foods Ltd", "RC1234567")
    second = receipt_content(receipt, "mama-put", keys.kid, version=2, checked=checked)
    third = receipt_content(receipt, "mama-put", keys.kid, checked=checked)
    assert "identity" not in second["merchant"]
    identity = {"legal_name": "Mama Put Foods Ltd", "registration_number": "RC1234567"}
    assert third == {**second, "v": 3, "merchant": {**second["merchant"], "identity": identity}}
    unregistered = receipt_content(receipt, "mama-put", keys.kid, checked=Identity("Mama Put Foods Ltd"))
    assert unregistered["merchant"]["identity"] == {"legal_name": "Mama Put Foods Ltd", "registration_number": None}


def test_a_receipt_stored_before_numbers_signs_its_number_as_null(receipt_factory, keys):
    receipt = receipt_factory()
    Receipt.objects.filter(id=receipt.id).update(number_series=None, number=None)
    receipt.refresh_from_db()
    assert receipt_content(receipt, "mama-put", keys.kid)["number"] is None


def test_a_content_version_that_does_not_exist_is_refused(receipt_factory, keys):
    with pytest.raises(ValueError, match=r"no content version 4: the versions are \(1, 2, 3\)"):
        receipt_content(receipt_factory(), "mama-put", keys.kid, version=4)


def test_erasing_the_contact_or_refunding_leaves_the_signed_content_as_it_was(receipt_factory, keys):
    receipt = receipt_factory(customer_email="ada@example.com")
    before = canonicalize(receipt_content(receipt, "mama-put", keys.kid))
    receipt.customer_email = None
    receipt.customer_phone = None
    receipt.save()
    _refund(receipt, amount=1000)
    receipt.refresh_from_db()
    assert receipt.status == "partially_refunded"
    assert canonicalize(receipt_content(receipt, "mama-put", keys.kid)) == before


def test_a_refund_names_its_sale_and_a_void_its_receipt(receipt_factory, keys):
    sale = receipt_factory()
    refund = _refund(sale, amount=1000, reason="cold")
    content = receipt_content(refund.receipt, "mama-put", keys.kid)
    assert content["type"] == "refund"
    assert content["number"] == refund.receipt.receipt_number != sale.receipt_number
    assert content["total_amount"] == 1000
    assert content["refund_of"] == {"token": sale.token, "short_code": sale.short_code, "lines": [], "reason": "cold"}

    other = receipt_factory(token="rcpt_other001_aaaaaa", short_code="OTHER1")
    cancelled = refunds.void(other, "Rung up twice", keyed=True)
    voided = void_content(cancelled, other, "mama-put", keys.kid)
    assert {k: voided[k] for k in ("v", "type", "token", "short_code", "number", "reason")} == {
        "v": 3,
        "type": "void",
        "token": "rcpt_other001_aaaaaa",
        "short_code": "OTHER1",
        "number": other.receipt_number,
        "reason": "Rung up twice",
    }
    assert voided["voided_at"].endswith("Z")
    assert "number" not in void_content(cancelled, other, "mama-put", keys.kid, version=1)


def test_from_version_3_a_refund_signs_its_share_of_its_sales_tax_and_card(receipt_factory, keys):
    sale = receipt_factory(
        subtotal_amount=130000,
        tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 130000, "tax_amount": 9750, "inclusive": False}],
        total_amount=139750,
        payment_details={"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
    )
    refund = _refund(sale, items=[{"index": 0, "quantity": 1}]).receipt
    third = receipt_content(refund, "mama-put", keys.kid)
    assert third["tax_lines"] == [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 50000, "tax_amount": 3750, "inclusive": False}
    ]  # the share the refund's receipt file and page state
    assert third["payment"] == {
        "method": "card",
        "card_brand": "visa",
        "card_last4": "4242",
        "authorization_code": "A1B2C3",
    }
    second = receipt_content(refund, "mama-put", keys.kid, version=2)
    assert (second["tax_lines"], second["payment"]["card_brand"]) == ([], None)  # the refund's own row: none


def test_the_signature_is_the_current_keys_over_the_canonical_form(receipt_factory, keys):
    receipt = receipt_factory()
    signed = sign(receipt_content(receipt, "mama-put", keys.kid), keys)
    assert signed.canonical == canonicalize(signed.content)
    assert keys.public[keys.kid].verify(signed.signature, signed.canonical)
    assert len(signed.digest) == 32
    assert signed.leaf_hash != signed.digest


def test_content_naming_another_key_is_not_signed(receipt_factory, keys):
    with pytest.raises(ValueError, match="the content names the key 'retired'"):
        sign(receipt_content(receipt_factory(), "mama-put", "retired"), keys)


def _fixed_keys():
    from receco_verify.keys import b64url

    seed = bytes(range(32))
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    return parse({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64url(public), "d": b64url(seed)}]}, "test")


def _fixed_receipt():
    return Receipt(
        token="rcpt_mfx3k2a1_q8z0lp",
        short_code="K7P2QX",
        livemode=True,
        merchant_name="Mama Put Kitchen \u2014 Ikeja \u20a6",
        location="Lekki Phase 1",
        transaction_date=datetime(2026, 11, 22, 10, 15, tzinfo=UTC),
        created_at=datetime(2026, 11, 22, 10, 15, 2, 345678, tzinfo=UTC),
        currency="NGN",
        total_amount=130000,
        items=[
            {"name": "Jollof rice", "quantity": 2, "unit_price": 50000, "total_price": 100000},
            {"name": "Zobo 0.5 l", "quantity": 1.5, "unit_price": 20000, "total_price": 30000, "sku": "ZB-05"},
        ],
        details={
            "subtotal_amount": 130000,
            "discount_amount": 0,
            "tax_lines": [
                {"name": "VAT", "rate": 7.5, "taxable_amount": 120930, "tax_amount": 9070, "inclusive": True}
            ],
            "payment_details": {"card_brand": "visa", "card_last4": "4242", "authorization_code": "A1B2C3"},
        },
        payment_method="card",
        number_series="MAMAPU-2026",
        number=123,
    )


# Every signature in every log rests on these bytes, one set for each version of the
# content: a change to the content, its canonical form or the hashing breaks this test,
# never a receipt signed before it.
SIGNED_BYTES = {
    1: (
        '{"currency":"NGN","discount_amount":0,"issued_at":"2026-11-22T10:15:02.345Z","items":['
        '{"name":"Jollof rice","quantity":2,"total_price":100000,"unit_price":50000},'
        '{"name":"Zobo 0.5 l","quantity":1.5,"sku":"ZB-05","total_price":30000,"unit_price":20000}],'
        '"kid":"1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y","livemode":true,'
        '"merchant":{"id":"mama-put","location":"Lekki Phase 1","name":"Mama Put Kitchen \u2014 Ikeja \u20a6"},'
        '"payment":{"authorization_code":"A1B2C3","card_brand":"visa","card_last4":"4242","method":"card"},'
        '"refund_of":null,"short_code":"K7P2QX","subtotal_amount":130000,'
        '"tax_lines":[{"inclusive":true,"name":"VAT","rate":7.5,"tax_amount":9070,"taxable_amount":120930}],'
        '"tip_amount":null,"token":"rcpt_mfx3k2a1_q8z0lp","total_amount":130000,'
        '"transaction_date":"2026-11-22T10:15:00.000Z","type":"sale","v":1}',
        "65fabcdaf438e5ff0986dd4f1b465cd256bd7a6fe76719d4b5816db7ef7184bd"
        "aa9cb21b15e1e678c5d218fdad032855d5a5ceefc95e04e58fa3efd7eef7410f",
        "51e20b9be64e1c9066524d42378e976e6c669e47b6c62ac5d8a1784e378ef4ba",
    ),
    2: (
        '{"currency":"NGN","discount_amount":0,"issued_at":"2026-11-22T10:15:02.345Z","items":['
        '{"name":"Jollof rice","quantity":2,"total_price":100000,"unit_price":50000},'
        '{"name":"Zobo 0.5 l","quantity":1.5,"sku":"ZB-05","total_price":30000,"unit_price":20000}],'
        '"kid":"1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y","livemode":true,'
        '"merchant":{"id":"mama-put","location":"Lekki Phase 1","name":"Mama Put Kitchen \u2014 Ikeja \u20a6"},'
        '"number":"MAMAPU-2026-000123",'
        '"payment":{"authorization_code":"A1B2C3","card_brand":"visa","card_last4":"4242","method":"card"},'
        '"refund_of":null,"short_code":"K7P2QX","subtotal_amount":130000,'
        '"tax_lines":[{"inclusive":true,"name":"VAT","rate":7.5,"tax_amount":9070,"taxable_amount":120930}],'
        '"tip_amount":null,"token":"rcpt_mfx3k2a1_q8z0lp","total_amount":130000,'
        '"transaction_date":"2026-11-22T10:15:00.000Z","type":"sale","v":2}',
        "a5c1d181c4422e33f492d0d8512a3656fa85d2defc7bfa7ad1ba6ffa051a5b8e"
        "5a027b588ff1a67880cf809e6538206df80854531238b36d312681c3135eb40b",
        "9d96b7c21a116f012c5534379fdd0a17ae36be1ffc6f2f2dfa28bacf6b6cd943",
    ),
    3: (
        '{"currency":"NGN","discount_amount":0,"issued_at":"2026-11-22T10:15:02.345Z","items":['
        '{"name":"Jollof rice","quantity":2,"total_price":100000,"unit_price":50000},'
        '{"name":"Zobo 0.5 l","quantity":1.5,"sku":"ZB-05","total_price":30000,"unit_price":20000}],'
        '"kid":"1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y","livemode":true,'
        '"merchant":{"id":"mama-put","identity":{"legal_name":"Mama Put Foods Ltd","registration_number":"RC1234567"},'
        '"location":"Lekki Phase 1","name":"Mama Put Kitchen \u2014 Ikeja \u20a6"},'
        '"number":"MAMAPU-2026-000123",'
        '"payment":{"authorization_code":"A1B2C3","card_brand":"visa","card_last4":"4242","method":"card"},'
        '"refund_of":null,"short_code":"K7P2QX","subtotal_amount":130000,'
        '"tax_lines":[{"inclusive":true,"name":"VAT","rate":7.5,"tax_amount":9070,"taxable_amount":120930}],'
        '"tip_amount":null,"token":"rcpt_mfx3k2a1_q8z0lp","total_amount":130000,'
        '"transaction_date":"2026-11-22T10:15:00.000Z","type":"sale","v":3}',
        "d694c97216240919b7d6ba06280722152bd926e72fa91b0c0593d4a740d6260b"
        "f043d3ee427ee6537a81d37ac8919623df0cf606607d58b723560b2e4f304203",
        "36cd1408bb15612d5607636ae797099db801069ed3cbaa4fcdd0d6fbcf27ff4b",
    ),
}


@pytest.mark.parametrize("version", sorted(SIGNED_BYTES))
def test_a_receipts_signed_bytes_stay_as_they_were_signed(version):
    keys = _fixed_keys()
    canonical, signature, leaf = SIGNED_BYTES[version]
    checked = Identity("Mama Put Foods Ltd", "RC1234567")  # stated from version 3 on
    signed = sign(receipt_content(_fixed_receipt(), "mama-put", keys.kid, version=version, checked=checked), keys)
    assert keys.kid == "1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y"
    assert signed.canonical == canonical.encode()
    assert signed.signature.hex() == signature
    assert signed.leaf_hash.hex() == leaf


def test_a_receipts_content_row_holds_the_same_content_as_the_receipt(receipt_factory, keys):
    sale = receipt_factory(tax_lines=[{"name": "VAT", "rate": 7.5, "taxable_amount": 9302, "tax_amount": 698}])
    refund = _refund(sale, amount=1000, reason="cold").receipt
    rows = Receipt.objects.annotate(
        merchant_string_id=F("merchant__string_id"),
        checked_legal_name=F("merchant__checked_legal_name"),
        checked_registration_number=F("merchant__checked_registration_number"),
    ).values_list(*ContentRow._fields)
    for receipt in (sale, refund):
        row = ContentRow._make(rows.get(id=receipt.id))
        assert receipt_content(row, "mama-put", keys.kid, sale=sale) == receipt_content(receipt, "mama-put", keys.kid)
    assert (row.receipt_type, sale.receipt_type) == ("refund", "sale")
