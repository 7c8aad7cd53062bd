"""Receipts in the admin: read-only, scoped, searchable, filterable, exportable as CSV."""

import csv
import io
import re

import pytest
from django.core.management import call_command

from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.validation import validate_sale

pytestmark = pytest.mark.django_db

LIST = "/admin/receipts/receipt/"


@pytest.fixture
def ours(receipt_factory):
    return receipt_factory(customer_email="ada@example.com")


@pytest.fixture
def theirs(other_merchant, sale):
    values = {**sale, "merchant_string_id": other_merchant.string_id, "token": "rcpt_theirs01_bbbbbb"}
    return create_receipt(other_merchant, validate_sale({**values, "short_code": "THEIR1"})).receipt


def _export(client, ids):
    response = client.post(LIST, {"action": "export_csv", "_selected_action": ids})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    # utf-8-sig: the file starts with a byte order mark, for spreadsheets (dashboard.sales_csv).
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))


@pytest.mark.parametrize("who", ["owner", "member"])
def test_staff_see_their_merchants_receipts_only(client, ours, theirs, request, who):
    client.force_login(request.getfixturevalue(who))
    content = client.get(LIST).content.decode()
    assert ours.short_code in content
    assert theirs.short_code not in content


def test_an_outsider_cannot_open_our_receipt(client, outsider, ours):
    client.force_login(outsider)
    response = client.get(f"/admin/receipts/receipt/{ours.pk}/change/")
    assert response.status_code == 404
    assert ours.short_code not in response.content.decode()


def test_the_superuser_sees_all(client, superuser, ours, theirs):
    client.force_login(superuser)
    content = client.get(LIST).content.decode()
    assert ours.short_code in content
    assert theirs.short_code in content


def test_receipts_are_read_only(client, owner, ours):
    client.force_login(owner)
    url = f"/admin/receipts/receipt/{ours.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    assert b"Jollof rice" in page.content
    assert client.post(url, {"status": "refunded"}).status_code == 403
    assert client.get("/admin/receipts/receipt/add/").status_code == 403
    assert client.get(f"/admin/receipts/receipt/{ours.pk}/delete/").status_code == 403


@pytest.mark.parametrize("term", ["k7p2qx", "rcpt_mfx3k2a1_q8z0lp", "ADA@example.com"])
def test_it_searches_by_short_code_token_or_email(client, owner, ours, receipt_factory, term):
    other = receipt_factory(token="rcpt_other001_cccccc", short_code="OTHER1")
    client.force_login(owner)
    content = client.get(LIST, {"q": term}, follow=True).content.decode()  # a code or token opens its sale
    assert ours.short_code in content
    assert other.short_code not in content


def test_search_stays_inside_the_users_merchants(client, outsider, ours):
    client.force_login(outsider)
    content = client.get(LIST, {"q": ours.short_code}).content.decode()
    assert ours.token not in content
    assert "0 results" in content


def test_a_search_that_finds_nothing_says_so(client, owner, ours):
    client.force_login(owner)
    page = client.get(LIST, {"q": "couscous"})
    assert page.status_code == 200
    assert '<p class="search-none" role="status">No receipts match “couscous”.</p>' in page.content.decode()
    assert "No receipts match" not in client.get(LIST, {"q": "ada@example.com"}).content.decode()


@pytest.mark.parametrize("term", ["31/02", "31/02/2026", "29/02/2026 - 3/3/2026", "22/11 - 31/11"])
def test_a_search_for_a_day_the_calendar_lacks_says_so(client, owner, ours, term):
    client.force_login(owner)
    page = client.get(LIST, {"q": term})
    assert page.status_code == 200
    assert page.context["cl"].result_count == 0
    assert f"No receipts match “{term}”: the calendar has no such day." in page.content.decode()


def test_the_search_box_says_which_days_it_reads_in_the_shops_order(client, owner, merchant):
    client.force_login(owner)
    help_text = "a day (26/11/2026, 26 Nov, yesterday), days (20/11 - 22/11) or a month (Nov 2026)."
    assert help_text in client.get(LIST).content.decode()
    merchant.country = "US"
    merchant.save()
    help_text = "a day (11/26/2026, Nov 26, yesterday), days (11/20 - 11/22) or a month (Nov 2026)."
    assert help_text in client.get(LIST).content.decode()


def test_it_filters_by_livemode(client, owner, ours, receipt_factory):
    test_receipt = receipt_factory(token="rcpt_testmode_dddddd", short_code="TEST01")
    Receipt.objects.filter(pk=test_receipt.pk).update(livemode=False)
    client.force_login(owner)
    content = client.get(LIST, {"mode": "test"}).content.decode()
    assert "TEST01" in content
    assert ours.short_code not in content


def test_it_filters_by_date(client, owner, ours, receipt_factory):
    older = receipt_factory(token="rcpt_older001_eeeeee", short_code="OLDER1", transaction_date="2026-01-05T09:00:00Z")
    client.force_login(owner)
    content = client.get(
        LIST,
        {"transaction_date__gte": "2026-11-01 00:00:00+00:00", "transaction_date__lt": "2026-12-01 00:00:00+00:00"},
    ).content.decode()
    assert ours.short_code in content
    assert older.short_code not in content


def test_a_multi_merchant_user_filters_by_merchant(client, owner, ours, theirs, other_merchant):
    from merchants.models import MerchantMembership

    MerchantMembership.objects.create(user=owner, merchant=other_merchant, role="member")
    client.force_login(owner)
    content = client.get(LIST, {"merchant": other_merchant.pk}).content.decode()
    assert theirs.short_code in content
    assert ours.short_code not in content


def test_it_exports_csv(client, owner, ours):
    client.force_login(owner)
    rows = _export(client, [ours.pk])
    assert rows[0][:3] == ["short_code", "receipt_number", "token"]
    record = dict(zip(rows[0], rows[1], strict=True))
    assert record["short_code"] == "K7P2QX"
    assert record["merchant_id"] == "mama-put"
    assert record["total_amount"] == "1300.00"
    assert record["total_amount_minor_units"] == "130000"
    assert record["status"] == "Completed"
    assert record["items"] == "2 × Jollof rice @ 500.00; 1 × Chapman @ 300.00"
    assert record["customer_email"] == "ada@example.com"
    assert record["transaction_date"] == "2026-11-22T10:15:00.000Z"
    assert len(rows) == 2


def test_the_export_escapes_formulas(client, owner, receipt_factory):
    receipt = receipt_factory(
        location='=HYPERLINK("http://evil.example","x")',
        category="@SUM(1+1)",
        items=[{"name": "-2+3", "quantity": 1, "unit_price": 1, "total_price": 1}],
    )
    client.force_login(owner)
    record = dict(zip(*_export(client, [receipt.pk]), strict=True))
    assert record["location"] == '\'=HYPERLINK("http://evil.example","x")'
    assert record["category"] == "'@SUM(1+1)"
    assert record["items"] == "1 × -2+3 @ 0.01"  # starts with the quantity: harmless


def test_an_outsider_exports_nothing_of_ours(client, outsider, ours):
    client.force_login(outsider)
    rows = _export(client, [ours.pk])
    assert rows == [rows[0]]  # the header alone


def test_seeded_receipts_do_not_break_the_list(client, superuser, merchant):
    call_command("seedreceipts", merchant.string_id, "30", stdout=io.StringIO())
    client.force_login(superuser)
    assert client.get(LIST).status_code == 200


def test_an_operator_with_many_merchants_still_filters_by_one(
    client, superuser, ours, theirs, other_merchant, monkeypatch
):
    from dashboard.scoping import MerchantFilter

    monkeypatch.setattr(MerchantFilter, "longest_list", 1)
    client.force_login(superuser)
    content = client.get(LIST, {"merchant": other_merchant.pk}).content.decode()
    assert theirs.short_code in content
    assert ours.short_code not in content


def test_a_single_merchant_link_filters_for_its_staff(client, owner, ours, merchant):
    client.force_login(owner)
    response = client.get(LIST, {"merchant": merchant.pk})
    assert response.status_code == 200
    assert ours.short_code in response.content.decode()


def test_a_receipt_set_aside_says_so_and_can_be_found(client, owner, api, sale, live_key):
    genuine = {**sale, "token": "rcpt_genuine01_aaaaaa", "short_code": "GENU01"}
    api.post("createReceiptFromPOS", {**genuine, "total_amount": 1, "items": [
        {"name": "x", "quantity": 1, "unit_price": 1, "total_price": 1}]})  # fmt: skip
    api.post("createReceiptFromPOS", genuine, Authorization=f"Bearer {live_key.key}")
    lost = Receipt.objects.get(set_asides__isnull=False)
    client.force_login(owner)
    listed = client.get(LIST, {"set_aside": "yes"}).content.decode()
    assert lost.short_code in listed
    assert "GENU01" not in listed
    page = client.get(f"{LIST}{lost.pk}/change/").content.decode()
    assert "gave its link code rcpt_genuine01_aaaaaa and code GENU01 to a sale sent with the key" in page
    assert "<label>Code moved to another sale:</label>" in page


def test_refunds_and_voids_show_in_the_admin(client, owner, api, stored, receipt_factory, live_key):
    headers = {"Authorization": f"Bearer {live_key.key}"}
    _, body = api.post("refundReceipt", {"token": stored.token, "amount": 30000, "reason": "Cold food"}, **headers)
    refund = Receipt.objects.get(token=body["result"]["data"]["token"])
    voided = receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01")
    api.post("voidReceipt", {"token": voided.token, "reason": "Rung up twice"}, **headers)
    client.force_login(owner)
    sale_page = client.get(f"{LIST}{stored.pk}/change/").content.decode()
    assert f">{refund.receipt_number}</a>: ₦300.00" in sale_page
    refund_page = client.get(f"{LIST}{refund.pk}/change/").content.decode()
    assert ">STORE1</a>: Cold food" in refund_page
    assert "Refund" in refund_page
    assert ": Rung up twice" in client.get(f"{LIST}{voided.pk}/change/").content.decode()
    refunds_only = client.get(LIST, {"type": "refund"}).content.decode()
    assert refund.short_code in refunds_only
    assert "STORE1" not in refunds_only


def test_the_list_shows_times_in_the_merchants_zone_and_values_in_words(client, owner, receipt_factory, merchant):
    receipt = receipt_factory(payment_method="bank_transfer", status="completed", total_amount=150000)
    client.force_login(owner)
    content = client.get(LIST).content.decode()
    assert "22 Nov 2026, 11:15 WAT" in content  # 10:15 UTC, the sale's date
    assert "Completed" in content
    assert "₦1,500.00" in content
    detail = client.get(f"{LIST}{receipt.pk}/change/").content.decode()
    assert "Bank transfer" in detail
    assert "bank_transfer" not in detail
    merchant.time_zone = "Asia/Tokyo"
    merchant.save()
    assert "22 Nov 2026, 19:15 JST" in client.get(LIST).content.decode()


def test_the_csv_has_the_shops_local_times_and_names_the_zone(client, owner, ours):
    client.force_login(owner)
    rows = _export(client, [ours.pk])
    record = dict(zip(rows[0], rows[1], strict=True))
    assert record["transaction_date_local"] == "2026-11-22 11:15"
    assert record["time_zone"] == "Africa/Lagos"


def test_the_list_reads_as_the_product(client, owner, ours, receipt_factory):
    from receipts.refunds import void

    void(receipt_factory(token="rcpt_voided01_aaaaaa", short_code="VOID01"), "Rung up twice", keyed=True)
    client.force_login(owner)
    content = client.get(LIST).content.decode()
    assert "<h1>Receipts</h1>" in content
    assert "Select receipt" not in content
    for words in ("By test or live", "By sale date", "Partly refunded", "Live: real sales"):
        assert words in content, words
    assert "By livemode" not in content
    voided = client.get(LIST, {"status": "voided"}).content.decode()
    assert "VOID01" in voided
    assert ours.short_code not in voided


def test_the_sale_shows_its_number_and_a_number_finds_its_receipt(client, owner, merchant, ours, sale):
    merchant.receipt_prefix = "MP"
    merchant.save()
    second = create_receipt(merchant, validate_sale({**sale, "token": "rcpt_second01_cccccc", "short_code": None}))
    number = second.receipt.receipt_number
    assert number.startswith("MP-")
    assert number.endswith("-000001")
    client.force_login(owner)
    # A number that finds one receipt opens it, as a code does.
    found = client.get(LIST, {"q": number.lower()})
    assert found.status_code == 302
    assert found["Location"] == f"/admin/receipts/receipt/{second.receipt.pk}/change/"
    assert client.get(LIST, {"q": number.replace("-000001", "-000002")}, follow=True).context["cl"].result_count == 0
    page = client.get(f"/admin/receipts/receipt/{second.receipt.pk}/change/").content.decode()
    assert number in page
    assert "Receipt" in page
    rows = _export(client, [second.receipt.pk])
    assert dict(zip(*rows, strict=True))["receipt_number"] == number


def test_a_receipts_page_shows_money_in_the_currency_and_plain_words(client, owner, receipt_factory):
    from receipts.refunds import refund, validate_refund

    sale = receipt_factory(customer_phone="+2348031234567")
    refund(sale, validate_refund({"token": sale.token, "items": [{"index": 1, "quantity": 1}]}), keyed=True)
    client.force_login(owner)
    html = client.get(f"/admin/receipts/receipt/{sale.pk}/change/").content.decode()
    items = html[html.index('<table class="item-table">') :].split("</table>", 1)[0]
    cells = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>.*?</td>", items)]
    # Item, quantity, unit price, total, how many were refunded.
    assert cells == ["Jollof rice", "2", "₦500.00", "₦1,000.00", "0", "Chapman", "1", "₦300.00", "₦300.00", "1"]
    assert "50000" not in items
    assert "30000" not in items
    for jargon in ("E.164", ">Token", ">Set aside", "set aside:", "Short code", "Receipt id", "given to another"):
        assert jargon not in html, jargon
    assert "<label>Receipt code:</label>" in html
    assert "<label>Receipt link code:</label>" in html
    assert (
        '<div class="readonly">rcpt_mfx3k2a1_q8z0lp<details class="technical"><summary>Details</summary>'
        "In the API: token."
    ) in html
    assert "+2348031234567" in html


def test_the_list_shows_a_refund_as_one_and_the_shop_only_to_users_of_several(client, owner, superuser, ours, theirs):
    client.force_login(owner)
    html = client.get(LIST).content.decode()
    headers = re.findall(r'<th scope="col" class="[^"]*column-([a-z_]+)', html)
    assert headers == ["receipt_code", "amount", "sale_date", "status_words", "mode", "customer"]
    client.force_login(superuser)
    html = client.get(LIST).content.decode()
    assert re.findall(r'<th scope="col" class="[^"]*column-([a-z_]+)', html)[-1] == "merchant_name"


def test_a_sales_page_shows_the_receipt_as_the_customer_sees_it_without_the_contact(client, owner, receipt_factory):
    sale = receipt_factory(customer_email="ada@example.com", customer_phone="+2348031234567")
    client.force_login(owner)
    html = client.get(f"/admin/receipts/receipt/{sale.pk}/change/").content.decode()
    # The customer page's own sheet, in its own stylesheet's shadow root.
    customer = html[html.index('<template shadowrootmode="open">') :].split("</template>", 1)[0]
    assert '<link rel="stylesheet" href="/static/receipts/site.css">' in customer
    assert '<article class="sheet receipt" aria-labelledby="receipt-title">' in customer
    assert '<p class="total-big">₦1,300.00</p>' in customer
    for contact in ("ada@", "8031234567", "803 123 4567"):
        assert contact not in customer, contact
    # The customer's page renders the same sheet.
    page = client.get(f"/app/receipt/{sale.token}").content.decode()
    sheet = page[page.index('<article class="sheet receipt"') :].split("</article>", 1)[0]
    assert sheet in customer
    # The staff's details keep the contact, for the shop's owner.
    assert "ada@example.com" in html
    assert "+2348031234567" in html


def test_the_refunds_list_is_titled_so(client, owner, ours):
    client.force_login(owner)
    assert client.get(LIST, {"type": "refund"}).context["title"] == "Refunds"
    assert client.get(LIST).context["title"] == "Receipts"


# --- A sale's page: delivery reports, the report to NRS, Send again, Print (issues 35, 36, 37) ---


def _page_text(client, receipt) -> str:
    response = client.get(f"{LIST}{receipt.pk}/change/")
    assert response.status_code == 200
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def test_the_sale_page_shows_each_deliverys_provider_report(client, owner, receipt):
    from datetime import UTC, datetime

    from messaging.models import Delivery

    Delivery.objects.create(
        merchant=receipt.merchant, receipt=receipt, channel="sms", destination="+2348031234589", status="sent",
        report="failed", report_reason="Absent subscriber", reported_at=datetime(2026, 11, 25, 9, 4, tzinfo=UTC),
    )  # fmt: skip
    client.force_login(owner)
    text = _page_text(client, receipt)
    assert "Text message to +234*******89," in text
    assert ": Sent; the provider reports Not delivered: Absent subscriber (25 Nov 2026, 10:04 WAT)" in text
    assert "+2348031234589" not in text


@pytest.mark.parametrize(
    ("state", "message", "words"),
    [
        ("reported", "", "Reported to NRS IRN K7P2QX-94ND90NR-20261122"),
        ("waiting", "", "Waiting to be reported to NRS IRN K7P2QX-94ND90NR-20261122"),
        (
            "refused",
            "Invalid TIN for supplier",
            "Refused by NRS: Invalid TIN for supplier IRN K7P2QX-94ND90NR-20261122",
        ),
    ],
)
def test_the_sale_page_says_where_its_report_to_nrs_stands(client, owner, receipt, state, message, words):
    from einvoicing.models import Report

    Report.objects.create(
        merchant=receipt.merchant, receipt=receipt, document="invoice", irn="K7P2QX-94ND90NR-20261122",
        state=state, message=message,
    )  # fmt: skip
    client.force_login(owner)
    assert f"Report to NRS: {words}" in _page_text(client, receipt)


def test_a_sale_not_reported_says_nothing_of_nrs(client, owner, receipt):
    client.force_login(owner)
    assert "NRS" not in _page_text(client, receipt)


def test_the_list_filters_refused_and_waiting_reports(client, owner, merchant, receipt_factory):
    from einvoicing.models import EInvoicing, Report

    sales = [receipt_factory(token=f"rcpt_nrsstate{n}_aaaaaa", short_code=f"NRS00{n}") for n in range(3)]
    client.force_login(owner)
    assert "By report to NRS" not in client.get(LIST).content.decode()  # a shop that does not report
    EInvoicing.objects.create(merchant=merchant, enabled=True, business_id="b1", service_id="94ND90NR")
    assert "By report to NRS" in client.get(LIST).content.decode()
    for sale, state in zip(sales, ["reported", "waiting", "refused"], strict=True):
        Report.objects.create(merchant=sale.merchant, receipt=sale, document="invoice", irn=f"I{sale.pk}", state=state)
    for value, code in (("refused", "NRS002"), ("waiting", "NRS001")):
        found = client.get(LIST, {"report": value}).context["cl"].result_list
        assert [sale.short_code for sale in found] == [code]


def test_the_list_filters_receipts_not_in_the_log_yet(client, owner, receipt_factory, test_receipt):
    from ledger.models import Leaf

    logged, waiting = (receipt_factory(token=f"rcpt_logstate{n}_aaaaaa", short_code=f"LOG00{n}") for n in range(2))
    Leaf.objects.create(
        index=0, kind="receipt", receipt=logged, leaf_hash=b"0" * 32, content_digest=b"0" * 32,
        signature=b"0" * 64, kid="k",
    )  # fmt: skip
    client.force_login(owner)
    found = client.get(LIST, {"logged": "no"}).context["cl"].result_list
    assert [sale.short_code for sale in found] == [waiting.short_code]


def test_an_owner_sends_a_sale_again_and_is_told_where(client, owner, receipt, django_capture_on_commit_callbacks):
    from django.core import mail

    client.force_login(owner)
    page = client.get(f"{LIST}{receipt.pk}/change/").content.decode()
    assert f'<form id="send-again-form" method="post" action="{LIST}{receipt.pk}/send/">' in page
    assert f'<li><a href="/app/receipt/{receipt.token}">Print</a></li>' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{LIST}{receipt.pk}/send/", {"email": "ada@example.com", "phone": ""})
    assert response.status_code == 302
    assert response["Location"] == f"{LIST}{receipt.pk}/change/"
    assert [message.to for message in mail.outbox] == [["ada@example.com"]]
    assert "Sent again to a*******@example.com (Email)." in _page_text(client, receipt)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"email": "", "phone": ""},
            "Not sent: This receipt has no email address or phone number: give one to send it to.",
        ),
        ({"email": "not an address", "phone": ""}, "Not sent: Enter a valid email address, like name@example.com."),
    ],
)
def test_a_send_that_cannot_be_made_says_why(client, owner, receipt, data, said):
    client.force_login(owner)
    response = client.post(f"{LIST}{receipt.pk}/send/", data, follow=True)
    assert response.status_code == 200
    assert said in " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())
    assert receipt.deliveries.count() == 0


def test_send_again_is_post_only_and_the_owners(client, owner, member, receipt):
    client.force_login(member)
    assert 'id="send-again"' not in client.get(f"{LIST}{receipt.pk}/change/").content.decode()
    assert client.post(f"{LIST}{receipt.pk}/send/", {"email": "ada@example.com"}).status_code == 403
    client.force_login(owner)
    assert client.get(f"{LIST}{receipt.pk}/send/").status_code == 405
    assert receipt.deliveries.count() == 0


def test_another_merchants_staff_cannot_send_our_sale(client, outsider, receipt):
    client.force_login(outsider)
    response = client.post(f"{LIST}{receipt.pk}/send/", {"email": "ada@example.com"})
    assert response.status_code == 404
    assert receipt.deliveries.count() == 0
