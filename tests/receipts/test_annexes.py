"""What is shown beside a receipt, outside its signed content (receipts.annexes): a stamped
receipt's e-invoice, its IRN and the NRS QR code, on the receipt page (and so its print
view), in the email and in the ORF document; nothing on an unstamped one; and what Receco
signed unchanged by it."""

import json
from email.mime.image import MIMEImage

import pytest

from einvoicing.models import Report
from ledger import trust
from receipts.rendering.messages import compose_email

pytestmark = pytest.mark.django_db

IRN = "MAMAPU2026000001-94ND90NR-20261122"
PAYLOAD = "UVIgcGF5bG9hZCBvZiBOUlM="


def _stamp(receipt, state=Report.State.REPORTED, document=Report.Document.INVOICE):
    return Report.objects.create(
        merchant_id=receipt.merchant_id, receipt=receipt, document=document, irn=IRN, state=state, qr_payload=PAYLOAD
    )


def _page(client, receipt) -> str:
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    return response.content.decode()


def test_a_stamped_receipts_page_shows_its_irn_and_the_nrs_qr_code(client, receipt):
    _stamp(receipt)
    page = _page(client, receipt)
    assert (
        '<div class="annex-nrs"><dt>NRS e-invoice (IRN)</dt><dd class="code annex-reference">' + IRN + "</dd></div>"
    ) in page
    figure = page[page.index('<figure class="qr annex-qr annex-nrs">') :]
    assert figure.index('<svg xmlns="http://www.w3.org/2000/svg"') < figure.index("</figure>")
    assert "<title>NRS e-invoice QR code</title>" in figure
    assert "Reported to NRS, Nigeria&#x27;s revenue service. NRS&#x27;s own app reads this code." in figure
    # Beside Receco's own QR code, which stays first.
    assert page.index("<title>QR code of this receipt,") < page.index("<title>NRS e-invoice QR code</title>")


@pytest.mark.parametrize("state", [Report.State.WAITING, Report.State.REFUSED], ids=["waiting", "refused"])
def test_a_receipt_not_stamped_yet_shows_none(client, receipt, state):
    _stamp(receipt, state=state)
    page = _page(client, receipt)
    assert IRN not in page
    assert "NRS e-invoice QR code" not in page
    assert "annex" not in page


def test_a_receipt_never_reported_shows_none_anywhere(client, receipt):
    assert "annex" not in _page(client, receipt)
    message = compose_email(receipt, "customer@example.com")
    assert "NRS" not in message.body
    assert message.attachments == []
    assert "nrs" not in trust.document(receipt)["extensions"]


def test_a_stamped_receipts_email_carries_the_irn_and_the_qr_code_as_an_image(receipt):
    _stamp(receipt)
    message = compose_email(receipt, "customer@example.com")
    assert f"Receipt code: K7P2QX\nNRS e-invoice (IRN): {IRN}\n\nView" in message.body
    html = message.alternatives[0][0]
    assert f'NRS e-invoice (IRN): <strong style="color:#111827;word-break:break-all;">{IRN}</strong>' in html
    assert '<img src="cid:nrs-qr@receco" width="160" height="160" alt="NRS e-invoice QR code"' in html
    (image,) = message.attachments
    assert isinstance(image, MIMEImage)
    assert image["Content-ID"] == "<nrs-qr@receco>"
    assert image.get_payload(decode=True).startswith(b"\x89PNG")
    # The HTML and its image travel together: clients show cid: images of a related part.
    assert "multipart/related" in message.message().as_string()


def test_a_stamped_receipts_orf_carries_it_in_an_unsigned_extension(client, receipt, settings):
    before = trust.document(receipt)
    _stamp(receipt)
    response = client.get(f"/app/receipt/{receipt.token}/receipt.orf.json")
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["extensions"]["nrs"] == {"irn": IRN, "qr_code": PAYLOAD}
    # Added beside the receipt, never signed over: the signed content and its hash are as before.
    assert document["extensions"]["receco"]["signed_content"] == before["extensions"]["receco"]["signed_content"]
    assert document.get("trust") == before.get("trust")
    assert IRN not in json.dumps(document["extensions"]["receco"])


def test_a_voided_sale_keeps_its_stamp_and_a_cancellation_adds_none(client, receipt):
    _stamp(receipt)
    _stamp(receipt, state=Report.State.WAITING, document=Report.Document.CANCELLATION)
    page = _page(client, receipt)
    assert page.count(f'<dd class="code annex-reference">{IRN}</dd>') == 1


def test_a_test_receipt_asks_nothing_of_einvoicing(test_receipt, django_assert_num_queries):
    from receipts import annexes

    with django_assert_num_queries(0):
        assert annexes.of(test_receipt) == []


def test_merchant_text_stays_escaped_beside_a_stamp(client, merchant, receipt):
    merchant.return_policy = "<script>alert(1)</script> within 7 days"
    merchant.save()
    _stamp(receipt)
    page = _page(client, receipt)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; within 7 days" in page
