"""Erasing a customer's contact (privacy.erasure): gone from the receipts of every shop, the
deliveries, the webhook bodies, the cache and the database as a whole; the receipts, their
signatures and the log still valid; a record that it happened, holding no contact."""

import json

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.forms.models import model_to_dict

from ledger import audit
from messaging import sms
from messaging.erasure import ERASED
from messaging.models import Delivery
from messaging.outbox import dispatch
from privacy import erasure
from privacy.erasure import erase_contact
from privacy.models import ErasureRecord
from receipts.creation import create_receipt
from receipts.models import Receipt
from receipts.validation import validate_sale
from tests.ledger.conftest import append
from tests.privacy.conftest import EMAIL, OTHER_EMAIL, OTHER_PHONE, PHONE, cache_dump, database_dump, variants
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def _holding(text: str, *contacts: str) -> list[str]:
    return sorted(variant for variant in variants(*contacts) if variant in text)


def _body(receipt) -> dict:
    (event,) = Event.objects.filter(receipt=receipt)
    return json.loads(event.body)["data"]["object"]


def test_a_phone_is_gone_from_two_shops_receipts_deliveries_webhook_bodies_and_cache(customer_receipts):
    (ours, other_shops), theirs = customer_receipts
    assert _holding(database_dump(), PHONE)  # before: on receipts, deliveries and events

    erased = erase_contact(PHONE, via="locker")

    assert erased.kind == "phone"
    assert erased.counts == {"receipts": 2, "deliveries": 2, "webhook_events": 2, "locker": 0}
    assert _holding(database_dump(), PHONE) == []
    assert _holding(cache_dump(), PHONE) == []
    for receipt in (ours, other_shops):
        receipt.refresh_from_db()
        assert receipt.customer_phone is None
        assert _body(receipt)["customer_phone"] is None
    assert ours.customer_email == EMAIL  # the email address was not asked for
    assert _body(ours)["customer_email"] == EMAIL
    theirs.refresh_from_db()
    assert (theirs.customer_phone, theirs.customer_email) == (OTHER_PHONE, OTHER_EMAIL)
    assert _body(theirs)["customer_phone"] == OTHER_PHONE


def test_each_delivery_keeps_its_record_without_its_destination(customer_receipts):
    (ours, _), _ = customer_receipts
    erase_contact(PHONE, via="locker")
    delivery = Delivery.objects.get(receipt=ours, channel="sms")
    assert (delivery.destination, delivery.status) == ("", "sent")
    assert delivery.masked_destination == "(erased)"
    assert str(delivery) == "Text message to (erased)"


def test_an_email_address_is_erased_whatever_its_case(customer_receipts):
    (ours, _), theirs = customer_receipts
    erased = erase_contact(EMAIL.lower(), via="locker")
    assert erased.counts == {"receipts": 1, "deliveries": 1, "webhook_events": 1, "locker": 0}
    assert _holding(database_dump(), EMAIL) == []
    ours.refresh_from_db()
    assert (ours.customer_email, ours.customer_phone) == (None, PHONE)
    assert Receipt.objects.get(pk=theirs.pk).customer_email == OTHER_EMAIL


def test_signatures_and_the_log_still_verify(customer_receipts, capsys):
    append()
    erase_contact(PHONE, via="locker")
    erase_contact(EMAIL.lower(), via="locker")
    assert audit.audit().problems == []
    call_command("verifylog")
    assert "OK 3 entries and 1 checkpoints checked: no problem" in capsys.readouterr().out


def test_a_delivery_not_sent_yet_is_never_sent(merchant, sale):
    data = validate_sale({**sale, "customer_phone": PHONE})
    receipt = create_receipt(merchant, data, keyed=True).receipt  # its dispatcher never woken
    assert Delivery.objects.get(receipt=receipt).status == "pending"
    erase_contact(PHONE, via="locker")
    dispatch(threads=False)
    delivery = Delivery.objects.get(receipt=receipt)
    assert (delivery.status, delivery.last_error, delivery.destination) == ("failed", ERASED, "")
    assert sms.outbox == []


def test_the_record_says_when_what_kind_and_how_many_and_holds_no_contact(customer_receipts):
    erase_contact(PHONE, via="locker")
    (record,) = ErasureRecord.objects.all()
    assert [field.name for field in ErasureRecord._meta.get_fields()] == ["id", "created_at", "via", "kind", "counts"]
    assert model_to_dict(record, exclude=["id"]) == {
        "via": "locker",
        "kind": "phone",
        "counts": {"receipts": 2, "deliveries": 2, "webhook_events": 2, "locker": 0},
    }
    assert record.created_at is not None
    assert str(record).startswith("Phone number erased by locker at ")


def test_erasing_a_contact_nothing_holds_changes_nothing_but_is_recorded(customer_receipts):
    erase_contact(PHONE, via="locker")
    again = erase_contact(PHONE, via="operator")
    assert again.counts == {"receipts": 0, "deliveries": 0, "webhook_events": 0, "locker": 0}
    assert again.total == 0
    assert list(ErasureRecord.objects.order_by("created_at").values_list("via", flat=True)) == ["locker", "operator"]


@pytest.mark.parametrize("contact", ["08031234567", "2348031234567", "+234 803 123 4567", "", "+0123456"], ids=repr)
def test_a_contact_not_normalised_is_refused(contact):
    with pytest.raises(ValueError, match=r"^not a phone number in E\.164 \(\+2348031234567\) nor an email address$"):
        erase_contact(contact, via="locker")
    assert not ErasureRecord.objects.exists()


def test_an_unknown_way_is_refused():
    with pytest.raises(ValueError, match="'web' is not a valid ErasureRecord.Via"):
        erase_contact(PHONE, via="web")


def test_an_app_above_erases_what_it_keeps_in_the_same_erasure(customer_receipts, monkeypatch):
    # As the receipt locker does with what it keeps by a contact: here, one cache entry.
    cache.set("locker:signed-in:+2348031234567", "session 1")
    heard = []

    def forget(field, contact):
        heard.append((field, contact))
        return int(cache.delete(f"locker:signed-in:{contact}"))

    monkeypatch.setattr(erasure, "_ERASERS", {})
    erasure.register("sessions", forget)
    erased = erase_contact(PHONE, via="locker")
    assert heard == [("customer_phone", PHONE)]
    assert erased.counts["sessions"] == 1
    assert _holding(cache_dump(), PHONE) == []
    assert ErasureRecord.objects.get().counts["sessions"] == 1


def test_an_eraser_that_fails_undoes_the_whole_erasure(customer_receipts, monkeypatch):
    def broken(field, contact):
        raise RuntimeError("the locker's store is down")

    monkeypatch.setattr(erasure, "_ERASERS", {"sessions": broken})
    with pytest.raises(RuntimeError):
        erase_contact(PHONE, via="locker")
    assert Receipt.objects.filter(customer_phone=PHONE).count() == 2
    assert not ErasureRecord.objects.exists()


def test_the_operators_command_normalises_what_it_is_given(customer_receipts, capsys):
    call_command("erasecontact", "0803 123 4567")
    assert capsys.readouterr().out == "Erased the phone: 2 receipts, 2 deliveries, 2 webhook events, 0 locker\n"
    assert ErasureRecord.objects.get().via == "operator"
    assert not Receipt.objects.filter(customer_phone=PHONE).exists()


def test_the_operators_command_refuses_what_is_no_contact(db):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="^Not erased: Not a valid phone number$"):
        call_command("erasecontact", "12345")


def _claimed_then_erased(merchant, sale, erase: bool) -> Delivery:
    """A text of a receipt claimed by a sender, which read it (and its receipt) then; the
    customer's number erased while it was being sent, if ``erase``."""
    from messaging.outbox import claim

    receipt = create_receipt(merchant, validate_sale({**sale, "customer_phone": PHONE}), keyed=True).receipt
    [(pk, _, _)] = claim()
    read = Delivery.objects.select_related("receipt").get(pk=pk)
    if erase:
        erase_contact(PHONE, via="locker")
    assert read.receipt == receipt
    assert read.receipt.customer_phone == PHONE  # as the sender read it
    return read


@pytest.mark.parametrize("erase", [False, True])
def test_a_delivery_erased_while_being_sent_tells_the_shop_nothing(merchant, sale, endpoints, erase):
    from messaging.outbox import record
    from messaging.transports import Failed

    read = _claimed_then_erased(merchant, sale, erase)
    record(read, Failed("refused by the provider", permanent=True))
    delivery = Delivery.objects.get(pk=read.pk)
    assert delivery.status == "failed"
    failed = Event.objects.filter(type="delivery.failed")
    if not erase:
        [event] = failed  # a failure the shop is told of, as ever
        assert PHONE in event.body
        return
    assert (delivery.destination, delivery.masked_destination) == ("", "(erased)")
    assert failed.count() == 0
    assert _holding(database_dump(), PHONE) == []


def test_a_customer_s_destination_is_masked_with_a_receipt_or_without():
    assert Delivery(channel="sms", destination=PHONE).masked_destination == "+234*******67"
    assert Delivery(channel="email", destination="ada@example.com").masked_destination == "a*******@example.com"
    assert Delivery(channel="sms", destination="").masked_destination == "(erased)"
    assert Delivery(channel="webhook", destination="17").masked_destination == "webhook 17"
    assert Delivery(channel="signin-sms", destination="4").masked_destination == "signin-sms 4"


def test_a_number_is_gone_from_whatsapp_deliveries_with_the_providers_ids_and_reports(merchant, sale, settings):
    """Issue 35: every new place a contact lands, and what leads back to it at the provider."""
    from messaging import reports
    from messaging.models import ChannelSettings, Report

    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"
    ChannelSettings.objects.create(merchant=merchant, sms_sender_id="MamaPut")
    chosen = {**sale, "customer_phone": PHONE, "customer_phone_channel": "whatsapp"}
    receipt = create_receipt(merchant, validate_sale(chosen), keyed=True).receipt
    texted = create_receipt(merchant, validate_sale({**sale, "token": "rcpt_texted_000001", "short_code": "",
                                                     "customer_phone": PHONE}), keyed=True).receipt  # fmt: skip
    for delivery, message_id in zip(Delivery.objects.order_by("pk"), ["wamid.HBgNMjM0", "SM0123"], strict=True):
        Delivery.objects.filter(pk=delivery.pk).update(
            status=Delivery.Status.SENT, provider="whatsapp" if delivery.channel == "whatsapp" else "twilio",
            provider_message_id=message_id, parts=1,
        )  # fmt: skip
    reports.record("whatsapp", "wamid.HBgNMjM0", Report.FAILED, f"131026 undeliverable to {PHONE}")
    assert _holding(database_dump(), PHONE)

    erased = erase_contact(PHONE, via="locker")

    assert erased.counts["deliveries"] == 2
    dump = database_dump()
    assert _holding(dump, PHONE) == []
    assert "wamid.HBgNMjM0" not in dump
    assert "SM0123" not in dump
    for delivery in Delivery.objects.all():
        assert (delivery.destination, delivery.provider_message_id, delivery.report_reason) == ("", "", "")
        assert delivery.parts == 1  # what it cost stays
    receipt.refresh_from_db()
    texted.refresh_from_db()
    assert (receipt.customer_phone, receipt.customer_phone_channel, texted.customer_phone) == (None, None, None)
    assert reports.record("whatsapp", "wamid.HBgNMjM0", Report.READ).delivery is None  # a late report finds nothing
