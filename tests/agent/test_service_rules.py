"""The agent's copies of the service's rules against the service's own: its input rules
(receco_agent.service_rules) against its serializers, its money formats (receco_agent.money)
against receipts.money, its reading of the RateLimit headers against the headers the
service writes, its signed tokens and derived short codes (receco_agent.tokens) against the
service's checks of them. When one changes, this says to change the other."""

import re

import pytest
from django.conf import settings
from receco_agent import money, service_rules, tokens
from receco_agent.pacing import Limit, parse_limits
from receco_agent.transactions import InvalidTransaction, validate
from rest_framework import serializers

from merchants.admission.limits import Quota, RateState
from merchants.keys import token_secret
from merchants.models import string_id_validator
from receco.lib.rates import parse_rate
from receipts import codes
from receipts import money as service_money
from receipts.claims import token_mac
from receipts.refunds import RefundSerializer
from receipts.validation import (
    CARD_NUMBER_RE,
    DEFAULT_CURRENCY,
    SaleSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictNumberField,
    sums_problem,
)
from tests.agent.support import LIVE_KEY, TEST_KEY
from tests.agent.test_tokens import SHORT_CODES, VECTORS


def _rule(field) -> tuple:
    if isinstance(field, serializers.ListSerializer):
        return ("list", field.max_length, _rule(field.child))
    if isinstance(field, serializers.Serializer):
        return ("object", {name: _rule(inner) for name, inner in field.fields.items()})
    if isinstance(field, StrictIntegerField):
        return ("int", field.min_value, field.max_value)
    if isinstance(field, StrictNumberField):
        return ("number", field.min_value, field.max_value)
    if isinstance(field, StrictBooleanField):
        return ("bool",)
    if isinstance(field, StrictCharField):
        return ("text", field.max_length)
    if isinstance(field, serializers.ChoiceField):
        return ("choice", tuple(field.choices))
    raise AssertionError(f"no rule for {field!r}")


def test_the_agents_field_rules_are_the_services():
    assert _rule(SaleSerializer()) == ("object", service_rules.SALE)
    assert _rule(RefundSerializer()) == ("object", service_rules.REFUND)


def test_the_agents_patterns_and_limits_are_the_services():
    assert CARD_NUMBER_RE.pattern == service_rules.CARD_NUMBER_PATTERN
    assert f"^{service_rules.MERCHANT_ID_PATTERN}$" == string_id_validator.regex.pattern
    assert service_rules.MAX_BODY_BYTES == settings.RECECO_MAX_BODY_BYTES


def test_the_receipt_forms_are_the_services():
    assert service_rules.TOKEN_PATTERN == codes.TOKEN_PATTERN
    # A short code is read in any case.
    assert codes.SHORT_CODE_PATTERN.replace("A-Z", "A-Za-z") == service_rules.SHORT_CODE_PATTERN


@pytest.mark.parametrize("text", ["Mama\x00Put", "Lekki \ud800", "\udfff", "fine", "Jollof \U0001f35b"])
def test_the_agent_refuses_the_text_the_service_refuses(text):
    field = StrictCharField(max_length=200)
    try:
        field.run_validation(text)
        service_refuses = False
    except serializers.ValidationError:
        service_refuses = True
    assert (service_rules.text_problem(text) is not None) == service_refuses


SUMS = [
    {"subtotal_amount": 1000, "discount_amount": 100, "tip_amount": 50, "tax_lines": [(75, False)], "total": 1025},
    {"subtotal_amount": 1000, "discount_amount": 100, "tip_amount": 50, "tax_lines": [(75, False)], "total": 1024},
    {"subtotal_amount": 1000, "tax_lines": [(75, True)], "total": 1000},
    {"subtotal_amount": 999, "total": 999},
    {"total": 5},
]


@pytest.mark.parametrize("case", SUMS)
def test_the_agent_adds_up_a_sale_as_the_service_does(case):
    lines = [
        {"name": "VAT", "rate": 7.5, "taxable_amount": 1000, "tax_amount": tax, "inclusive": inclusive}
        for tax, inclusive in case.get("tax_lines", [])
    ]
    sale = {
        "items": [{"name": "Rice", "quantity": 2, "unit_price": 500, "total_price": 1000}],
        "total_amount": case["total"],
        "tax_lines": lines,
        **{k: case[k] for k in ("subtotal_amount", "discount_amount", "tip_amount") if k in case},
    }
    camel = {
        "merchantId": "test-shop",
        "items": [{"name": "Rice", "quantity": 2, "unitPrice": 500, "totalPrice": 1000}],
        "totalAmount": case["total"],
        "taxLines": [
            {"name": "VAT", "rate": 7.5, "taxableAmount": 1000, "taxAmount": tax, "inclusive": inclusive}
            for tax, inclusive in case.get("tax_lines", [])
        ],
        **{re.sub(r"_(\w)", lambda m: m[1].upper(), k): case[k] for k in sale if k.endswith("_amount") and k in case},
    }
    try:
        validate(camel)
        agent_refuses = False
    except InvalidTransaction:
        agent_refuses = True
    assert agent_refuses == (sums_problem(sale) is not None)


def test_the_agents_currencies_are_the_services():
    services = {code: (currency.symbol, currency.digits) for code, currency in service_money.CURRENCIES.items()}
    agents = {code: (currency.symbol, currency.digits) for code, currency in money.CURRENCIES.items()}
    assert agents == services
    assert money.DEFAULT_CURRENCY == DEFAULT_CURRENCY


@pytest.mark.parametrize(
    ("amount", "code"),
    [
        (100, "NGN"),
        (130000, "NGN"),
        (-250, "GHS"),
        (1500, "JPY"),
        (1234567, "KWD"),
        (5, "XYZ"),
        (0, ""),
        (10**15, "usd"),
    ],
)
@pytest.mark.parametrize("symbol", [True, False])
def test_the_agent_writes_amounts_as_the_service_does(amount, code, symbol):
    assert money.format_amount(amount, code, symbol=symbol) == service_money.format_amount(amount, code, symbol=symbol)


def test_the_agent_reads_the_rate_limit_headers_the_service_writes():
    state = RateState(
        (Quota(parse_rate("1000/m"), 950, 37), Quota(parse_rate("100/s"), 0, 1), Quota(parse_rate("30/5m"), 3, 299))
    )
    assert parse_limits(state.headers()) == (
        Limit("minute", 950, 37.0, 1000, 60),
        Limit("second", 0, 1.0, 100, 1),
        Limit("300s", 3, 299.0, 30, 300),
    )


LOGOS = [
    "https://cdn.example.com/logo.png",
    "HTTP://EXAMPLE.COM/A.PNG",
    "http://[::1]/logo.png",
    "http://[::1",
    "http://example.com:99999/logo.png",
    "http://",
    "http:///logo.png",
    "ftp://example.com/logo.png",
    "javascript:alert(1)",
    "//example.com/logo.png",
    "http://exa mple.com/logo.png",
    "https://example.com/logo.png\n",
]


@pytest.mark.parametrize("logo", LOGOS)
def test_the_agent_refuses_every_logo_the_service_refuses(logo):
    try:
        SaleSerializer().validate_merchant_logo(logo)
        service_refuses = False
    except serializers.ValidationError:
        service_refuses = True
    sale = {"merchantId": "test-shop", "items": [{"name": "Tea", "quantity": 1, "unitPrice": 1}], "totalAmount": 1}
    try:
        validate({**sale, "merchantLogo": logo})
        agent_refuses = False
    except InvalidTransaction:
        agent_refuses = True
    assert agent_refuses or not service_refuses
    # The service's page cannot draw a logo it cannot parse: the agent never sends one.
    assert agent_refuses == (logo in LOGOS[3:])


@pytest.mark.parametrize("key", [TEST_KEY, LIVE_KEY])
def test_the_agents_tokens_carry_the_proof_the_service_checks(key):
    assert tokens.token_secret(key).hex() == token_secret(key)
    token = tokens.new_token(key)
    match = codes.SIGNED_TOKEN_RE.match(token)
    assert match is not None
    assert match["lookup"] == key[8:20]
    assert token_mac(token_secret(key), match["body"], match["lookup"]) == match["mac"]
    assert tokens.short_code_for(token) == codes.derived_short_code(token)


def test_the_test_vectors_and_the_agents_short_codes_are_the_services():
    assert (tokens.SHORT_CODE_ALPHABET, tokens.DERIVED_FIRST) == (codes.SHORT_CODE_ALPHABET, codes.DERIVED_FIRST)
    for key, body, token, _ in VECTORS:  # the service makes the test vectors' MACs too
        assert f"{body}_{key[8:20]}{token_mac(token_secret(key), body, key[8:20])}" == token
    for token, code in [(token, code) for _, _, token, code in VECTORS] + SHORT_CODES:
        assert codes.derived_short_code(token) == code
    for _ in range(200):
        token = tokens.new_token()
        assert tokens.short_code_for(token) == codes.derived_short_code(token)
