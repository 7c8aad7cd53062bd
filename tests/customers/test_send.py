"""The receipt page's "send me this receipt" form."""

import pytest
from django.core import mail
from django.test import Client

from messaging import sms
from messaging.models import Delivery

pytestmark = pytest.mark.django_db


@pytest.fixture
def post(client, receipt, django_capture_on_commit_callbacks):
    def send(data, *, follow=False, reference=None):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(f"/app/receipt/{reference or receipt.token}/send", data, follow=follow)

    return send


def test_it_emails_the_receipt_and_confirms_with_the_masked_address(post, receipt):
    response = post({"email": "customer@example.com", "phone": ""}, follow=True)
    assert response.redirect_chain == [(f"/app/receipt/{receipt.token}#sent", 302)]
    html = response.content.decode()
    assert "Your receipt is on its way to c*******@example.com." in html
    assert "customer@example.com" not in html
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["customer@example.com"]
    receipt.refresh_from_db()
    assert receipt.customer_email == "customer@example.com"
    delivery = receipt.deliveries.get()
    assert (delivery.channel, delivery.status, delivery.attempts) == ("email", "sent", 1)


def test_it_texts_the_link_to_a_phone(post, receipt):
    response = post({"email": "", "phone": "0803 123 4589"}, follow=True)
    assert "Your receipt is on its way to +234*******89." in response.content.decode()
    assert [m.to for m in sms.outbox] == ["+2348031234589"]
    link, _, not_mine = sms.outbox[0].body.partition("\nNot yours? ")
    assert link.endswith(f": https://receipts.example.test/r/{receipt.short_code}")
    assert not_mine.startswith(f"https://receipts.example.test/n/{receipt.short_code}?k=p")


def test_it_sends_to_both(post, receipt):
    response = post({"email": "customer@example.com", "phone": "+2348031234589"}, follow=True)
    assert "on its way to c*******@example.com and +234*******89." in response.content.decode()
    assert len(mail.outbox) == 1
    assert len(sms.outbox) == 1


def test_it_requires_an_email_or_phone(post, receipt):
    response = post({"email": " ", "phone": ""})
    assert response.status_code == 400
    assert "Enter an email address or a mobile number." in response.content.decode()
    assert not Delivery.objects.exists()


def test_it_explains_a_bad_email_and_keeps_what_was_typed(post, receipt):
    response = post({"email": "customer@", "phone": ""})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="email-error" class="error">Enter a valid email address, like name@example.com.' in html
    assert 'value="customer@"' in html
    assert 'aria-invalid="true" aria-describedby="email-error"' in html
    assert not mail.outbox


def test_it_explains_a_bad_phone_with_a_local_example(post, receipt):
    html = post({"phone": "12345"}).content.decode()
    assert "Enter a valid mobile number, like 0802 123 4567." in html


def test_a_short_code_in_the_address_works(post, receipt):
    response = post({"email": "customer@example.com"}, reference="k7p2qx")
    assert response.status_code == 302
    assert len(mail.outbox) == 1


def test_an_unknown_receipt_is_a_404(post, receipt):
    assert post({"email": "customer@example.com"}, reference="rcpt_unknown_000000").status_code == 404


def test_it_needs_the_csrf_token(receipt):
    client = Client(enforce_csrf_checks=True)
    response = client.post(f"/app/receipt/{receipt.token}/send", {"email": "customer@example.com"})
    assert response.status_code == 403
    assert "Please try again" in response.content.decode()
    assert not Delivery.objects.exists()


def test_it_works_with_the_csrf_token_from_the_page(receipt, django_capture_on_commit_callbacks):
    client = Client(enforce_csrf_checks=True)
    client.get(f"/app/receipt/{receipt.token}")
    token = client.cookies["csrftoken"].value
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/app/receipt/{receipt.token}/send", {"email": "customer@example.com", "csrfmiddlewaretoken": token}
        )
    assert response.status_code == 302
    assert len(mail.outbox) == 1


def test_one_network_cannot_send_without_limit(post, receipt_factory, settings):
    settings.RECECO_CONTACT_FORM_RATE = "2/h"
    assert post({"email": "one@example.com"}).status_code == 302
    assert post({"email": "two@example.com"}).status_code == 302
    response = post({"email": "three@example.com"})
    assert response.status_code == 429
    # The limit it states is the one the setting declares.
    assert "Too many requests from your network: at most 2 per hour." in response.content.decode()
    assert len(mail.outbox) == 2


def test_one_receipt_cannot_be_sent_without_limit(post, receipt):
    for n in range(5):
        assert post({"email": f"person{n}@example.com"}).status_code == 302
    response = post({"email": "person5@example.com"})
    assert response.status_code == 429
    assert "sent as often as it can be today" in response.content.decode()
    assert len(mail.outbox) == 5


def test_sending_twice_by_mistake_sends_once(post, receipt):
    post({"email": "customer@example.com"})
    response = post({"email": "customer@example.com"}, follow=True)
    assert "on its way to c*******@example.com" in response.content.decode()
    assert len(mail.outbox) == 1


def test_the_page_lists_what_was_sent_masked(post, client, receipt):
    post({"email": "customer@example.com"})
    html = client.get(f"/app/receipt/{receipt.token}").content.decode()
    assert "Email to c*******@example.com: sent" in html


def test_only_the_browser_that_asked_sees_what_was_sent(post, receipt):
    post({"email": "customer@example.com"})
    html = Client().get(f"/app/receipt/{receipt.token}").content.decode()
    assert "Sent from this receipt" not in html
    assert "c*******@example.com" not in html


def test_a_forged_list_of_deliveries_shows_nothing(post, receipt):
    post({"email": "customer@example.com"})
    stranger = Client()
    stranger.cookies["receco_sent"] = f'{{"{receipt.token}":[1,2,3]}}'
    assert "Sent from this receipt" not in stranger.get(f"/app/receipt/{receipt.token}").content.decode()


def test_what_was_sent_from_one_receipt_is_not_listed_on_another(post, client, receipt, receipt_factory):
    post({"email": "customer@example.com"})
    other = receipt_factory(token="rcpt_another1_aaaaaa", short_code="OTHER1")
    assert "Sent from this receipt" not in client.get(f"/app/receipt/{other.token}").content.decode()


def test_after_an_error_the_first_field_in_error_has_the_focus(post, receipt):
    html = post({"email": "ada@"}).content.decode()
    assert 'aria-invalid="true" aria-describedby="email-error" autofocus>' in html
    html = post({"email": "", "phone": "12"}).content.decode()
    assert 'aria-invalid="true" aria-describedby="phone-error" autofocus>' in html


def test_get_is_not_allowed(client, receipt):
    assert client.get(f"/app/receipt/{receipt.token}/send").status_code == 405


def test_a_test_receipt_says_nothing_is_delivered(client, test_receipt, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/app/receipt/{test_receipt.token}/send", {"email": "customer@example.com"})
    html = client.get(f"/app/receipt/{test_receipt.token}").content.decode()
    assert "Test receipt: nothing is delivered to c*******@example.com; the request is recorded." in html
    assert "Email to c*******@example.com: not delivered (test receipt)" in html
    assert not mail.outbox


# --- WhatsApp for the number, where the shop offers it -----------------------------------

CHANNEL_LEGEND = "<legend>Send it to the number by</legend>"


@pytest.fixture
def whatsapp(settings):
    """The deployment configured WhatsApp; the merchant did not turn it off."""
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID, settings.RECECO_WHATSAPP_ACCESS_TOKEN = "1065", "EAAG-token"


def test_without_whatsapp_the_form_offers_text_messages_only(client, receipt):
    page = client.get(f"/app/receipt/{receipt.token}").content.decode()
    assert CHANNEL_LEGEND not in page
    assert 'Mobile number <span class="label-note">(text message)</span>' in page


def test_with_whatsapp_the_form_offers_it_and_text_message_is_the_default(client, receipt, whatsapp):
    page = client.get(f"/app/receipt/{receipt.token}").content.decode()
    assert CHANNEL_LEGEND in page
    assert '<input type="radio" name="phone_channel" value="sms" checked> Text message (SMS)' in page
    assert '<input type="radio" name="phone_channel" value="whatsapp"> WhatsApp' in page


def test_a_number_asked_for_on_whatsapp_is_sent_there_with_the_opt_in_kept(client, receipt, whatsapp):
    response = client.post(
        f"/app/receipt/{receipt.token}/send", {"phone": "0803 123 4589", "phone_channel": "whatsapp"}, follow=True
    )
    assert "Your receipt is on its way to +234*******89 on WhatsApp." in response.content.decode()
    receipt.refresh_from_db()
    assert (receipt.customer_phone, receipt.customer_phone_channel) == ("+2348031234589", "whatsapp")
    delivery = receipt.deliveries.get()
    assert (delivery.channel, delivery.destination, delivery.opt_in) == ("whatsapp", "+2348031234589", "receipt_page")
    # "Sent from this receipt at your request" lists it, on its channel.
    assert "WhatsApp to +234*******89" in response.content.decode()


def test_a_number_without_a_choice_goes_by_text_message_where_whatsapp_is_offered(client, receipt, whatsapp):
    response = client.post(f"/app/receipt/{receipt.token}/send", {"phone": "0803 123 4589"})
    assert response.status_code == 302
    receipt.refresh_from_db()
    assert receipt.customer_phone_channel == "sms"
    assert [d.channel for d in receipt.deliveries.all()] == ["sms"]


def test_whatsapp_asked_for_where_the_shop_does_not_offer_it_is_refused(client, receipt):
    response = client.post(
        f"/app/receipt/{receipt.token}/send", {"phone": "0803 123 4589", "phone_channel": "whatsapp"}
    )
    assert response.status_code == 400
    assert "This shop does not send receipts on WhatsApp: choose text message." in response.content.decode()
    receipt.refresh_from_db()
    assert receipt.customer_phone is None
    assert not Delivery.objects.exists()


def test_the_daily_limit_of_a_number_holds_on_whatsapp_too(client, receipt_factory, whatsapp, settings):
    settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT = settings.RECECO_DELIVERY_DESTINATION_DAILY_LIMIT_WITHOUT_KEY = 1
    first, second = receipt_factory(), receipt_factory(token="rcpt_whatsapplimit_b", short_code="WALIM2")
    data = {"phone": "0803 123 4589", "phone_channel": "whatsapp"}
    assert client.post(f"/app/receipt/{first.token}/send", data).status_code == 302
    response = client.post(f"/app/receipt/{second.token}/send", data)
    assert response.status_code == 429
    assert "This number has been sent as many receipts as we can send it today. Try again tomorrow." in (
        response.content.decode()
    )
