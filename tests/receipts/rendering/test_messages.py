"""What a delivery says: a receipt as an email and as a text message (receipts.rendering.messages),
each with its "Not your receipt?" link (receipts.detach_links)."""

import re

import pytest
from django.core import checks

from receipts import gsm
from receipts.rendering.messages import check_text_message, compose_email, compose_sms

pytestmark = pytest.mark.django_db

# GSM 03.38 basic character set (without the escape): texts in it are sent 160 characters a part.
GSM_BASIC = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿"
    "abcdefghijklmnopqrstuvwxyzäöñüà"
)
EMAIL = "customer@example.com"
PHONE = "+2348031234567"
# The "Not your receipt?" link a text ends with (receipts.detach_links), its key aside.
NOT_MINE = r"\nNot yours\? https://receipts\.example\.test/n/K7P2QX\?k=p[\w-]{8}:\w+:[\w-]{16}"


def test_the_email_has_text_and_html_parts_with_the_link(receipt):
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Mama Put Kitchen: ₦1,300.00"
    assert message.to == [EMAIL]
    assert message.from_email == "Mama Put Kitchen <receipts@localhost>"
    assert message.extra_headers["Auto-Submitted"] == "auto-generated"
    assert "https://receipts.example.test/app/receipt/K7P2QX\n" in message.body
    assert "Jollof rice\n  2 x ₦500.00 = ₦1,000.00" in message.body
    assert "TOTAL: ₦1,300.00" in message.body
    assert "22 November 2026, 11:15 WAT" in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html"
    assert '<a href="https://receipts.example.test/app/receipt/K7P2QX"' in html
    assert "background:#c2410c;color:#ffffff" in html
    # A well-formed MIME message: multipart/alternative, text first, then HTML.
    mime = message.message()
    assert mime.get_content_type() == "multipart/alternative"
    assert [part.get_content_type() for part in mime.get_payload()] == ["text/plain", "text/html"]


def _named(merchant, name):
    merchant.name = name
    merchant.save()


def test_the_email_escapes_merchant_fields_in_html_only(receipt_factory, merchant):
    _named(merchant, "Ade & Sons <b>")
    receipt = receipt_factory(total_amount=1)
    receipt.items = [{"name": "<script>x</script>", "quantity": 1, "unit_price": 1, "total_price": 1}]
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Ade & Sons <b>: ₦0.01"
    assert "<script>x</script>" in message.body  # plain text is not HTML
    html = message.alternatives[0][0]
    assert "<script>x" not in html
    assert "Ade &amp; Sons &lt;b&gt;" in html


def test_messages_never_carry_a_token_the_pos_chose(receipt_factory):
    # A token is the POS's to choose: one that says anything it likes must not reach the
    # customer's phone or inbox as the service's words. Messages link by short code.
    receipt = receipt_factory(token="Call-08031234567-to-claim-your-prize")
    text = compose_sms(receipt, PHONE)
    message = compose_email(receipt, EMAIL)
    assert re.search(": https://receipts.example.test/r/K7P2QX" + NOT_MINE + "$", text)
    for body in (text, message.body, message.alternatives[0][0]):
        assert "claim-your-prize" not in body


def test_a_merchant_name_cannot_inject_headers(receipt_factory, merchant):
    _named(merchant, "Shop\r\nBcc: victim@example.com")
    receipt = receipt_factory()
    message = compose_email(receipt, EMAIL)
    assert message.subject == "Your receipt from Shop Bcc: victim@example.com: ₦1,300.00"
    assert "\nBcc:" not in message.message().as_string().split("\n\n")[0]


LONG_NAME = "A very long merchant name that goes on and on and on"


def test_the_text_message_fits_one_part_shortening_the_shop_s_name(receipt_factory, merchant, settings):
    settings.RECECO_WEB_URL = "https://receco.ng"
    _named(merchant, LONG_NAME)
    text = compose_sms(receipt_factory(total_amount=130000000, items=[_item(130000000)]), PHONE)
    first, _, second = text.partition("\n")
    assert first == "Receipt from A very long merchant nam..., NGN 1,300,000.00: https://receco.ng/r/K7P2QX"
    assert re.fullmatch(r"Not yours\? https://receco\.ng/n/K7P2QX\?k=p[\w-]{8}:\w+:[\w-]{16}", second)
    assert gsm.septets(text) == len(text) == gsm.PART  # the name takes what the rest leaves


def test_a_short_name_is_kept_whole_in_one_part(receipt_factory, settings):
    settings.RECECO_WEB_URL = "https://receco.ng"
    text = compose_sms(receipt_factory(), PHONE)
    assert text.startswith("Receipt from Mama Put Kitchen, NGN 1,300.00: https://receco.ng/r/K7P2QX\nNot yours? ")
    assert gsm.septets(text) <= gsm.PART


def test_when_the_links_leave_the_name_too_little_room_the_text_drops_receipt_from(receipt_factory, merchant):
    # https://receipts.example.test (29 characters) leaves "Receipt from" a name of 11: the
    # text says the shop and the total alone, and the name keeps what that leaves.
    text = compose_sms(receipt_factory(), PHONE)
    assert re.fullmatch(r"Mama Put Kitchen, NGN 1,300\.00: https://receipts\.example\.test/r/K7P2QX" + NOT_MINE, text)
    _named(merchant, LONG_NAME)
    text = compose_sms(receipt_factory(token="rcpt_long_name_text_1", short_code="K7P2QY"), PHONE)
    first, _, second = text.partition("\n")
    assert first == "A very long merch..., NGN 1,300.00: https://receipts.example.test/r/K7P2QY"
    assert gsm.septets(text) == len(text) == gsm.PART


def test_when_no_form_leaves_the_name_room_it_takes_two_parts_and_the_links_stay_whole(
    receipt_factory, merchant, settings
):
    settings.RECECO_WEB_URL = "https://receipts.mamaputkitchen.example.com.ng"  # 46 characters
    _named(merchant, LONG_NAME)
    text = compose_sms(receipt_factory(), PHONE)
    assert re.fullmatch(
        r"Receipt from A very long merchant name that goes o\.\.\., NGN 1,300\.00: "
        r"https://receipts\.mamaputkitchen\.example\.com\.ng/r/K7P2QX"
        r"\nNot yours\? https://receipts\.mamaputkitchen\.example\.com\.ng/n/K7P2QX\?k=p[\w-]{8}:\w+:[\w-]{16}",
        text,
    )
    assert gsm.parts(text) == 2


def test_a_name_shorter_than_the_least_kept_fits_where_it_fits_whole(receipt_factory, merchant, settings):
    settings.RECECO_WEB_URL = "https://receipts.iyabasira.shop.ng"  # the short form leaves 10 characters
    _named(merchant, "Iya Basira")
    text = compose_sms(receipt_factory(), PHONE)
    assert text.startswith("Iya Basira, NGN 1,300.00: https://receipts.iyabasira.shop.ng/r/K7P2QX\nNot yours? ")
    assert gsm.septets(text) == gsm.PART


def test_the_text_is_in_the_gsm_alphabet_whatever_the_shop_is_called(receipt_factory, merchant, settings):
    settings.RECECO_WEB_URL = "https://receco.ng"
    _named(merchant, "Ọlá’s Café [Ikeja] ☕")
    text = compose_sms(receipt_factory(), PHONE)
    assert text.startswith("Receipt from Ola's Café (Ikeja) ?, NGN 1,300.00: ")
    assert set(text) <= GSM_BASIC  # 160 characters a part, not 70
    assert gsm.septets(text) <= gsm.PART


def test_the_text_s_short_links_lead_to_the_receipt_and_to_not_mine_with_its_key(client, receipt_factory):
    text = compose_sms(receipt_factory(customer_phone=PHONE), PHONE)
    link, not_mine = re.findall(r"https://receipts\.example\.test(/\S+)", text)
    opened = client.get(link)
    assert (opened.status_code, opened["Location"]) == (302, "/app/receipt/K7P2QX")
    assert client.get(link, follow=True).status_code == 200
    key = not_mine.partition("?k=")[2]
    opened = client.get(not_mine)
    assert (opened.status_code, opened["Location"]) == (302, f"/app/receipt/K7P2QX/not-mine?k={key}")
    page = client.get(not_mine, follow=True)
    assert page.status_code == 200
    assert "Remove my number from this receipt" in page.content.decode()


def _item(amount: int) -> dict:
    return {"name": "Generator", "quantity": 1, "unit_price": amount, "total_price": amount}


def test_test_receipts_say_so(test_receipt):
    assert compose_email(test_receipt, EMAIL).subject.startswith("[TEST] ")
    assert compose_sms(test_receipt, PHONE).startswith("[TEST] ")


def test_the_email_is_from_the_shop_and_replies_reach_its_support(receipt_factory, merchant):
    merchant.support_email = "help@mamaput.example.com"
    merchant.save()
    message = compose_email(receipt_factory(), EMAIL)
    assert message.from_email == "Mama Put Kitchen <receipts@localhost>"
    assert message.reply_to == ["help@mamaput.example.com"]


def test_a_shop_without_support_address_has_no_reply_to(receipt_factory):
    assert compose_email(receipt_factory(), EMAIL).reply_to == []


def test_a_refund_says_so_in_the_text_message(api, stored, live_key):
    from receipts.models import Receipt

    _, body = api.post("refundReceipt", {"token": stored.token, "amount": 5000}, Authorization=f"Bearer {live_key.key}")
    refund = Receipt.objects.get(token=body["result"]["data"]["token"])
    assert compose_sms(refund, PHONE).startswith("Refund, Mama Put Kit..., NGN 50.00: https://receipts.example.test/r/")
    message = compose_email(refund, EMAIL)
    assert message.subject == "Your refund receipt from Mama Put Kitchen: ₦50.00"
    assert "REFUND of receipt STORE1." in message.body


def test_a_refund_says_so_in_the_long_form_too(receipt_factory, settings):
    settings.RECECO_WEB_URL = "https://receco.ng"
    from receipts import refunds

    sale = receipt_factory()
    refund = refunds.refund(sale, refunds.validate_refund({"token": sale.token, "amount": 5000}), keyed=True).receipt
    text = compose_sms(refund, PHONE)
    assert text.startswith(f"Refund from Mama Put Kitchen, NGN 50.00: https://receco.ng/r/{refund.short_code}\n")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "https://receco.ng", "https://receipts.example.com"])
def test_the_start_up_check_is_quiet_when_texts_fit_one_part(settings, url):
    settings.RECECO_WEB_URL = url
    assert check_text_message() == []


@pytest.mark.parametrize("url", ["https://receipts.example.test", "https://receipts.mamaputkitchen.example.com.ng"])
def test_the_start_up_check_warns_when_the_address_makes_texts_two_parts(settings, url):
    settings.RECECO_WEB_URL = url
    (warning,) = check_text_message()
    assert warning.id == "receipts.W001"
    assert warning.level == checks.WARNING
    assert warning.msg == (
        f"RECECO_WEB_URL ({len(url)} characters) is too long for receipts' text messages to fit one part of 160 "
        "characters: a sale or refund of NGN 100,000.00 takes two, and costs twice as much."
    )
    assert warning.hint == (
        "An address of at most 28 characters, https:// included, keeps them to one part "
        "(docs/privacy.md, The text message)."
    )


def test_the_check_runs_with_django_s_system_checks(settings):
    settings.RECECO_WEB_URL = "https://receipts.mamaputkitchen.example.com.ng"
    assert [message.id for message in checks.run_checks() if message.id.startswith("receipts.")] == ["receipts.W001"]
