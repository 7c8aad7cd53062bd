import pytest

from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db

PATH = "updateReceiptContact"


def test_it_attaches_an_email(api, receipt):
    status, body = api.post(PATH, {"token": receipt.token, "email": "customer@example.com"})
    assert status == 200
    assert body == {
        "result": {
            "data": {
                "success": True,
                "deliveries": [{"channel": "email", "destination": "c*******@example.com", "status": "queued"}],
            }
        }
    }
    receipt.refresh_from_db()
    assert receipt.customer_email == "customer@example.com"
    assert receipt.customer_phone is None


def test_it_attaches_a_phone_in_e164(api, receipt):
    status, _ = api.post(PATH, {"token": receipt.token, "phone": "+234 803 123 4589"})
    assert status == 200
    receipt.refresh_from_db()
    assert receipt.customer_phone == "+2348031234589"


def test_it_reads_numbers_without_country_code_as_nigerian(api, receipt):
    api.post(PATH, {"token": receipt.token, "phone": "08031234589"})
    receipt.refresh_from_db()
    assert receipt.customer_phone == "+2348031234589"


def test_the_default_region_is_configurable(api, receipt, settings):
    settings.RECECO_PHONE_REGION = "GB"
    api.post(PATH, {"token": receipt.token, "phone": "07400 123456"})
    receipt.refresh_from_db()
    assert receipt.customer_phone == "+447400123456"


def test_it_accepts_a_short_code_in_any_case(api, receipt):
    status, _ = api.post(PATH, {"token": "k7p2qx", "email": "a@example.com", "phone": "+2348031234589"})
    assert status == 200
    receipt.refresh_from_db()
    assert (receipt.customer_email, receipt.customer_phone) == ("a@example.com", "+2348031234589")


def test_it_keeps_the_other_contact_when_one_is_given(api, receipt):
    api.post(PATH, {"token": receipt.token, "phone": "+2348031234589"})
    api.post(PATH, {"token": receipt.token, "email": "a@example.com", "phone": None})
    receipt.refresh_from_db()
    assert (receipt.customer_email, receipt.customer_phone) == ("a@example.com", "+2348031234589")


def test_it_updates_updated_at(api, receipt):
    before = receipt.updated_at
    api.post(PATH, {"token": receipt.token, "email": "a@example.com"})
    receipt.refresh_from_db()
    assert receipt.updated_at > before


@pytest.mark.parametrize("body", [{}, {"email": None}, {"email": "", "phone": "  "}])
def test_it_requires_an_email_or_phone(api, receipt, body):
    status, response = api.post(PATH, {"token": receipt.token, **body})
    assert status == 400
    assert response == error_envelope(400, "INVALID_INPUT", "Email or phone number required", PATH)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"email": "nobody"}, "email: Not a valid email address at a public domain"),
        ({"email": 42}, "email: Must be a string"),
        ({"phone": "12345"}, "phone: Not a valid phone number"),
        ({"phone": "call me"}, "phone: Not a phone number"),
        ({"email": "a@example.com", "phone": "0000"}, "phone: Not a valid phone number"),
    ],
)
def test_it_names_the_invalid_contact(api, receipt, body, message):
    status, response = api.post(PATH, {"token": receipt.token, **body})
    assert status == 400
    assert response == error_envelope(400, "INVALID_INPUT", message, PATH)
    receipt.refresh_from_db()
    assert receipt.customer_email is None


def test_it_answers_not_found(api, db):
    status, body = api.post(PATH, {"token": "ZZZZZZ", "email": "a@example.com"})
    assert status == 404
    assert body == error_envelope(404, "NOT_FOUND", "Receipt not found", PATH)


def test_it_rejects_a_malformed_token(api, db):
    status, body = api.post(PATH, {"token": "no!", "email": "a@example.com"})
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "Invalid token format", PATH)


def test_it_requires_a_token(api, db):
    status, body = api.post(PATH, {"email": "a@example.com"})
    assert status == 400
    assert body == error_envelope(400, "INVALID_INPUT", "token: This field is required", PATH)


def test_it_refuses_get(api, receipt):
    status, body = api.get(PATH, {"token": receipt.token, "email": "a@example.com"})
    assert status == 405
    assert body["error"]["data"] == {"code": "METHOD_NOT_SUPPORTED", "httpStatus": 405, "path": PATH}


# --- The customer's channel for the number (issue 35) ----------------------------------


@pytest.fixture
def whatsapp(settings):
    settings.RECECO_WHATSAPP_PHONE_NUMBER_ID = "106540352242922"
    settings.RECECO_WHATSAPP_ACCESS_TOKEN = "EAAG-token"


def test_a_number_asked_for_on_whatsapp_is_sent_there_with_the_opt_in_kept(api, receipt, whatsapp):
    from messaging.models import Delivery, OptIn

    status, body = api.post(PATH, {"token": receipt.token, "phone": "+2348031234589", "phone_channel": "whatsapp"})
    assert status == 200
    assert body["result"]["data"]["deliveries"] == [
        {"channel": "whatsapp", "destination": "+234*******89", "status": "queued"}
    ]
    receipt.refresh_from_db()
    assert receipt.customer_phone_channel == "whatsapp"
    delivery = Delivery.objects.get(receipt=receipt)
    assert (delivery.channel, delivery.opt_in) == ("whatsapp", OptIn.RECEIPT_PAGE)  # no key: the customer asked


def test_without_a_channel_the_number_is_texted(api, receipt, whatsapp):
    _, body = api.post(PATH, {"token": receipt.token, "phone": "+2348031234589", "phone_channel": None})
    assert body["result"]["data"]["deliveries"][0]["channel"] == "sms"


def test_whatsapp_where_the_shop_does_not_offer_it_is_refused_and_nothing_is_stored(api, receipt):
    status, body = api.post(PATH, {"token": receipt.token, "phone": "+2348031234589", "phone_channel": "whatsapp"})
    assert (status, body) == (
        400,
        error_envelope(
            400,
            "INVALID_INPUT",
            "phone_channel: WhatsApp is not offered for this receipt's shop; leave it out for SMS",
            PATH,
        ),
    )
    receipt.refresh_from_db()
    assert receipt.customer_phone is None


@pytest.mark.parametrize("channel", ["WhatsApp", "email", 1])
def test_an_unknown_channel_is_refused(api, receipt, whatsapp, channel):
    status, body = api.post(PATH, {"token": receipt.token, "phone": "+2348031234589", "phone_channel": channel})
    assert (status, body) == (
        400,
        error_envelope(400, "INVALID_INPUT", 'phone_channel: Must be "sms" or "whatsapp"', PATH),
    )
