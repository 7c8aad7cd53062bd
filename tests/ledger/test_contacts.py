"""A customer's contact is never signed: adding one to a logged receipt, or erasing it,
leaves every signature and every proof valid."""

import pytest
from receco_verify import keys as jwks_format
from receco_verify.receipt import verify_bundle

from ledger import audit
from receipts import writer
from receipts.models import Receipt
from tests.ledger.conftest import append


@pytest.fixture
def logged(receipt_factory):
    with_contact = [
        receipt_factory(
            token=f"rcpt_contact{i:02d}_aaaaa",
            short_code=f"CONT{i:02d}",
            customer_email=f"ada{i}@example.com",
            customer_phone="+2348031234567",
        )
        for i in range(3)
    ]
    without = receipt_factory(token="rcpt_nocontact_aaaaa", short_code="NOCONT", customer_email=None)
    append()
    return [*with_contact, without]


def test_an_erased_or_added_contact_leaves_every_signature_valid(logged, client):
    published = jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())
    before = {receipt.token: client.get(f"/log/proof/{receipt.token}").json() for receipt in logged}
    # Erased as an operator does on a customer's request: behind the writer, row by row.
    Receipt.objects.filter(id__in=[r.id for r in logged[:2]]).update(customer_email=None, customer_phone=None)
    writer.update_contact(Receipt.objects.get(id=logged[3].id), "grace@example.com", "+2348039876543")
    assert Receipt.objects.get(id=logged[3].id).customer_email == "grace@example.com"
    assert audit.audit().problems == []
    for receipt in logged:
        bundle = client.get(f"/log/proof/{receipt.token}").json()
        assert bundle == before[receipt.token]
        signed = str(bundle["content"])
        assert not [text for text in ("ada", "grace", "+234") if text in signed]
        verify_bundle(bundle, published)
