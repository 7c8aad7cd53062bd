import json
from datetime import UTC, datetime

import pytest
from receco_agent.transactions import (
    InvalidTransaction,
    parse_body,
    to_service_input,
    validate,
)

MERCHANT_ID_RULE = "merchantId must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
ITEM_NAME_RULE = "items[0].name is required and must be a string of 1 to 200 characters"
QUANTITY_RULE = "items[0].quantity must be an integer from 1 to 1000000"
TOTAL_RULE = "totalAmount must be an integer >= 0 (minor currency units)"
NOW = datetime(2026, 11, 22, 10, 15, 0, 123000, tzinfo=UTC)


def sale(**changes):
    body = {
        "merchantId": "test-shop",
        "items": [
            {
                "name": "Jollof",
                "quantity": 2,
                "unitPrice": 1500,
                "totalPrice": 3000,
                "sku": "J-1",
            }
        ],
        "totalAmount": 3000,
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


def error_of(data) -> str:
    with pytest.raises(InvalidTransaction) as info:
        validate(data)
    return str(info.value)


def test_full_transaction_maps_to_the_services_snake_case():
    tx = validate(
        sale(
            merchantName="Mama Put",
            merchantLogo="https://cdn.example/logo.png",
            accentColor="#0b6e4f",
            currency="NGN",
            paymentMethod="card",
            location="Lekki branch",
            timestamp="2026-11-22T11:15:00+01:00",
            cashierId="c-7",
            terminalId="t-2",
        )
    )
    assert to_service_input(tx, "rcpt_abc_def123", "K7P2QX", NOW) == {
        "token": "rcpt_abc_def123",
        "short_code": "K7P2QX",
        "merchant_string_id": "test-shop",
        "merchant_name": "Mama Put",
        "merchant_logo": "https://cdn.example/logo.png",
        "accent_color": "#0b6e4f",
        "currency": "NGN",
        "payment_method": "card",
        "location": "Lekki branch",
        "total_amount": 3000,
        "transaction_date": "2026-11-22T10:15:00.000Z",
        "items": [
            {
                "name": "Jollof",
                "quantity": 2,
                "unit_price": 1500,
                "total_price": 3000,
                "sku": "J-1",
            }
        ],
        "status": "completed",
        "terminal_id": "t-2",
    }
    assert tx.local_fields == {"cashierId": "c-7", "terminalId": "t-2"}


@pytest.mark.parametrize(
    ("terminal_id", "sent"),
    [
        ("Till 3", "Till 3"),
        (" t-2 ", "t-2"),
        ("T" * 32, "T" * 32),
        ("T" * 33, None),  # the service numbers by at most 32 characters: kept local only
        ("--", None),  # no letter or digit to number by
    ],
)
def test_the_terminal_is_sent_when_the_service_can_number_by_it(terminal_id, sent):
    tx = validate(sale(terminalId=terminal_id))
    assert to_service_input(tx, "t", "c", NOW).get("terminal_id") == sent
    assert tx.local_fields == {"terminalId": terminal_id}


def test_minimal_transaction_leaves_optional_fields_out_and_dates_it_now():
    tx = validate(sale(items=[{"name": "Tea", "quantity": 3, "unitPrice": 200}], totalAmount=600))
    assert to_service_input(tx, "rcpt_a_b", "ABCDEF", NOW) == {
        "token": "rcpt_a_b",
        "short_code": "ABCDEF",
        "merchant_string_id": "test-shop",
        "total_amount": 600,
        "transaction_date": "2026-11-22T10:15:00.123Z",
        "items": [{"name": "Tea", "quantity": 3, "unit_price": 200, "total_price": 600}],
        "status": "completed",
    }
    assert tx.local_fields == {}


def test_timestamp_without_offset_is_utc():
    tx = validate(sale(timestamp="2026-11-22T10:15:00"))
    assert to_service_input(tx, "t", "c", NOW)["transaction_date"] == "2026-11-22T10:15:00.000Z"


def test_unknown_fields_are_not_forwarded():
    tx = validate(sale(loyaltyNumber="LN-42"))
    assert "loyaltyNumber" not in to_service_input(tx, "t", "c", NOW)
    assert "loyalty_number" not in to_service_input(tx, "t", "c", NOW)


def test_the_customers_contact_and_channel_are_forwarded():
    """Issue 35: the customer's choice at the till (their WhatsApp opt-in) reaches the service."""
    tx = validate(
        sale(customerEmail="ada@example.com", customerPhone="+234 803 123 4567", customerPhoneChannel="whatsapp")
    )
    payload = to_service_input(tx, "t", "c", NOW)
    assert {key: payload[key] for key in ("customer_email", "customer_phone", "customer_phone_channel")} == {
        "customer_email": "ada@example.com",
        "customer_phone": "+234 803 123 4567",
        "customer_phone_channel": "whatsapp",
    }
    assert "customer_phone_channel" not in to_service_input(validate(sale(customerPhone="08031234567")), "t", "c", NOW)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"customerPhoneChannel": "telegram"}, 'customerPhoneChannel must be "sms" or "whatsapp"'),
        ({"customerPhoneChannel": "WhatsApp"}, 'customerPhoneChannel must be "sms" or "whatsapp"'),
        ({"customerPhone": "call me"}, "customerPhone must be a phone number, such as +2348031234567"),
        ({"customerEmail": "ada at example"}, "customerEmail must be an email address"),
    ],
)
def test_a_contact_or_channel_the_service_would_refuse_is_refused_at_the_till(changes, message):
    assert error_of(sale(**changes)) == message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"merchantId": ...}, "Missing required field(s): merchantId"),
        (
            {"merchantId": ..., "items": ..., "totalAmount": ...},
            "Missing required field(s): merchantId, items, totalAmount",
        ),
        ({"totalAmount": None}, "Missing required field(s): totalAmount"),
        ({"merchantId": 12}, MERCHANT_ID_RULE),
        ({"merchantId": "  "}, MERCHANT_ID_RULE),
        ({"merchantId": "my shop"}, MERCHANT_ID_RULE),
        ({"merchantId": "x" * 65}, MERCHANT_ID_RULE),
        ({"items": []}, "items must be an array of 1 to 500 items"),
        ({"items": {"name": "x"}}, "items must be an array of 1 to 500 items"),
        ({"items": [{"name": "x", "quantity": 1, "unitPrice": 1}] * 501}, "items must be an array of 1 to 500 items"),
        ({"items": ["x"]}, "items[0] must be an object"),
        ({"items": [{"quantity": 1, "unitPrice": 1}]}, ITEM_NAME_RULE),
        ({"items": [{"name": "x" * 201, "quantity": 1, "unitPrice": 1}]}, ITEM_NAME_RULE),
        ({"items": [{"name": "x", "quantity": 0, "unitPrice": 1}]}, QUANTITY_RULE),
        ({"items": [{"name": "x", "quantity": 1.5, "unitPrice": 1}]}, QUANTITY_RULE),
        ({"items": [{"name": "x", "quantity": True, "unitPrice": 1}]}, QUANTITY_RULE),
        ({"items": [{"name": "x", "quantity": 1_000_001, "unitPrice": 1}]}, QUANTITY_RULE),
        (
            {"items": [{"name": "x", "quantity": 1, "unitPrice": "100"}]},
            "items[0].unitPrice must be an integer >= 0 (minor currency units)",
        ),
        (
            {"items": [{"name": "x", "quantity": 1, "unitPrice": 1, "totalPrice": -1}]},
            "items[0].totalPrice must be an integer >= 0 (minor currency units)",
        ),
        (
            {"items": [{"name": "x", "quantity": 1, "unitPrice": 1, "sku": 5}]},
            "items[0].sku must be a string of at most 64 characters",
        ),
        ({"totalAmount": 10.5}, TOTAL_RULE),
        ({"totalAmount": "3000"}, TOTAL_RULE),
        ({"totalAmount": -1}, TOTAL_RULE),
        ({"totalAmount": 10**15 + 1}, TOTAL_RULE),
        ({"merchantName": 5}, "merchantName must be a string of at most 200 characters"),
        ({"location": "x" * 201}, "location must be a string of at most 200 characters"),
        ({"paymentMethod": "x" * 51}, "paymentMethod must be a string of at most 50 characters"),
        ({"accentColor": "green"}, "accentColor must be a hex colour such as #1a2b3c"),
        ({"currency": "naira"}, "currency must be a string of at most 3 characters"),
        ({"currency": "N1N"}, "currency must be a 3-letter code such as NGN"),
        ({"merchantLogo": "javascript:alert(1)"}, "merchantLogo must be an http:// or https:// URL"),
        ({"merchantLogo": "https://cdn.example/my logo.png"}, "merchantLogo must be an http:// or https:// URL"),
        ({"timestamp": "yesterday"}, "timestamp must be an ISO 8601 date and time such as 2026-11-22T10:15:00Z"),
        ({"tipAmount": -5}, "tipAmount must be an integer >= 0 (minor currency units)"),
        ({"taxLines": {"name": "VAT"}}, "taxLines must be an array of at most 20 tax lines"),
        (
            {"taxLines": [{"name": "VAT", "rate": "7.5"}]},
            "taxLines[0].rate must be a number from 0 to 100 (a percentage such as 7.5)",
        ),
        (
            {"taxLines": [{"name": "VAT", "rate": 7.5, "taxableAmount": 1, "taxAmount": 1, "inclusive": 1}]},
            "taxLines[0].inclusive must be true or false",
        ),
        ({"paymentDetails": {"cardLast4": "12a4"}}, "paymentDetails.cardLast4 must be the last 4 digits of the card"),
        (
            {"paymentDetails": {"authorizationCode": "4111 1111 1111 1111"}},
            "paymentDetails must not hold a card number (12 or more digits in a row)",
        ),
        ({"subtotalAmount": 1}, "subtotalAmount must equal the sum of the items' totalPrice (3000)"),
    ],
)
def test_invalid_transactions_say_what_is_wrong(changes, message):
    assert error_of(sale(**changes)) == message


def test_body_must_be_a_json_object():
    assert error_of([1, 2]) == "Request body must be a JSON object"
    with pytest.raises(InvalidTransaction, match="^Request body is not valid JSON$"):
        parse_body(b"{not json")
    with pytest.raises(InvalidTransaction, match="^Request body is not valid JSON$"):
        parse_body(b"\xff\xfe")


def test_parse_body_accepts_json_bytes():
    tx = parse_body(json.dumps(sale()).encode())
    assert tx.merchant_id == "test-shop"
    assert tx.total_amount == 3000


def test_currency_is_uppercased_and_empty_optional_strings_are_absent():
    tx = validate(sale(currency="ngn", location="", items=[{"name": "Tea", "quantity": 1, "unitPrice": 5, "sku": ""}]))
    payload = to_service_input(tx, "t", "c", NOW)
    assert payload["currency"] == "NGN"
    assert "location" not in payload
    assert payload["items"] == [{"name": "Tea", "quantity": 1, "unit_price": 5, "total_price": 5}]


def test_the_breakdown_and_the_card_map_to_the_services_fields():
    tx = validate(
        sale(
            subtotalAmount=3000,
            discountAmount=300,
            tipAmount=100,
            totalAmount=3000,
            taxLines=[
                {"name": "VAT", "rate": 7.5, "taxableAmount": 2700, "taxAmount": 200, "inclusive": False},
                {"name": "Levy", "rate": 1, "taxableAmount": 2700, "taxAmount": 27, "inclusive": True},
            ],
            paymentDetails={"cardBrand": "Verve", "cardLast4": "4242", "authorizationCode": "A1B2C3"},
        )
    )
    payload = to_service_input(tx, "rcpt_abc_123456", "ABCDEF", NOW)
    assert {
        k: payload[k] for k in ("subtotal_amount", "discount_amount", "tip_amount", "tax_lines", "payment_details")
    } == {
        "subtotal_amount": 3000,
        "discount_amount": 300,
        "tip_amount": 100,
        "tax_lines": [
            {"name": "VAT", "rate": 7.5, "taxable_amount": 2700, "tax_amount": 200, "inclusive": False},
            {"name": "Levy", "rate": 1, "taxable_amount": 2700, "tax_amount": 27, "inclusive": True},
        ],
        "payment_details": {"card_brand": "Verve", "card_last4": "4242", "authorization_code": "A1B2C3"},
    }
