"""Which channels a merchant's receipts may go on (messaging.channels), what the customer's
choice comes to (messaging.customers), and the operator's setchannels."""

import pytest
from django.core.management import CommandError, call_command

from messaging import channels
from messaging.models import SMS, WHATSAPP, ChannelSettings, Delivery, OptIn

pytestmark = pytest.mark.django_db

PHONE = "+2348031234567"


@pytest.fixture
def whatsapp(settings):
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"


def test_whatsapp_is_offered_where_the_service_has_it_and_the_shop_did_not_turn_it_off(merchant, settings):
    assert channels.configured(merchant.pk) == ["email", "sms"]
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"
    assert channels.configured(merchant.pk) == ["email", "sms", "whatsapp"]
    ChannelSettings.objects.create(merchant=merchant, whatsapp=False)
    assert channels.configured(merchant.pk) == ["email", "sms"]
    assert not channels.offers_whatsapp(merchant.pk)


def test_a_shops_texts_carry_its_sender_id_else_the_services(merchant, settings):
    settings.RECECO_SMS_SENDER = "Receco"
    assert channels.sender_id(merchant.pk) == "Receco"
    ChannelSettings.objects.create(merchant=merchant, sms_sender_id="MamaPut")
    assert channels.sender_id(merchant.pk) == "MamaPut"


# Recorded, not sent: sending on WhatsApp is tested against its double (tests/messaging/providers).
def test_a_sale_whose_customer_chose_whatsapp_goes_there_with_the_opt_in(whatsapp, receipt_factory):
    receipt_factory(customer_phone=PHONE, customer_phone_channel="whatsapp")
    delivery = Delivery.objects.get()
    assert (delivery.channel, delivery.opt_in, delivery.status) == (WHATSAPP, OptIn.TILL, Delivery.Status.PENDING)


def test_a_sale_asking_for_whatsapp_where_the_shop_does_not_offer_it_is_texted(receipt_factory, sent):
    receipt = sent(receipt_factory, customer_phone=PHONE, customer_phone_channel="whatsapp")
    assert Delivery.objects.get().channel == SMS
    assert receipt.customer_phone_channel == "whatsapp"  # the customer's choice, kept as asked


def test_a_refund_goes_where_the_sale_went(whatsapp, receipt_factory):
    from receipts.refunds import refund, validate_refund

    sale = receipt_factory(customer_phone=PHONE, customer_phone_channel="whatsapp")
    refund(sale, validate_refund({"token": sale.token, "amount": 1000}), keyed=True)
    assert list(Delivery.objects.order_by("pk").values_list("channel", flat=True)) == [WHATSAPP, WHATSAPP]


def test_a_numbers_daily_limit_counts_its_texts_and_whatsapp_messages_together(whatsapp, receipt_factory, settings):
    from django.utils import timezone

    from messaging import limits

    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT = 2
    for number in range(2):
        receipt_factory(token=f"rcpt_limit_{number:06d}", short_code="", customer_phone=PHONE)
    other = receipt_factory(token="rcpt_limit_999999", short_code="")
    [planned] = limits.plan(other, [(WHATSAPP, PHONE)], keyed=True, now=timezone.now())
    assert (planned.status, planned.message) == (
        limits.LIMITED,
        "phone: +234*******67 has been sent 2 receipts today, the most allowed",
    )


def test_setchannels_sets_the_sender_id_and_whatsapp(merchant, whatsapp, capsys):
    call_command("setchannels", merchant.string_id, "--sms-sender-id", "MamaPut", "--whatsapp", "off")
    assert capsys.readouterr().out == "mama-put: email, sms; texts from MamaPut\n"
    call_command("setchannels", merchant.string_id, "--no-sms-sender-id", "--whatsapp", "on")
    assert capsys.readouterr().out == "mama-put: email, sms, whatsapp; texts from Receco\n"
    with pytest.raises(CommandError, match="--sms-sender-id must be 3 to 11 letters, digits or spaces"):
        call_command("setchannels", merchant.string_id, "--sms-sender-id", "Mama Put Kitchen")
