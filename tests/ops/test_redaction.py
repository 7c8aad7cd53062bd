"""Credentials kept out of the logs (receco.ops.redaction): what ``redact`` replaces,
every route of the URLconf held to it, and the filter on a record's message, traceback
and stack. tests/ops/test_secrets_in_logs.py drives the flows through real servers."""

import json
import logging
import re
import sys

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from receco.ops.logformat import JsonFormatter
from receco.ops.redaction import RedactFilter, redact
from receco.ops.requestid import RequestIdFilter

KEY = "poslive_Ab12Cd34Ef56" + "x" * 32 + "Zz9Yy8"


@pytest.mark.parametrize(
    ("text", "logged"),
    [
        ("/app/receipt/rcpt_mfx3k2a1_q8z0lp", "/app/receipt/*"),
        ("/app/receipt/K7P2QX/send", "/app/receipt/*/send"),
        ("/app/receipt/sale-0042-till7/qr.svg", "/app/receipt/*/qr.svg"),
        ("/app/receipt/K7P2QX/wallet/receipt.pkpass", "/app/receipt/*/wallet/receipt.pkpass"),
        ("/receipt/rcpt_mfx3k2a1_q8z0lp", "/receipt/*"),
        ("/r/K7P2QX", "/r/*"),
        ("/n/K7P2QX", "/n/*"),
        ("/app/r/K7P2QX", "/app/r/K7P2QX"),
        ("/log/proof/sale-0042-till7", "/log/proof/*"),
        ("/log/checkpoint", "/log/checkpoint"),
        ("/admin/join/Zq3v9XkP2mW8tR4yL6nB1cJ5hG7dF0sA-uE_iO2pQ/", "/admin/join/*/"),
        ("/admin/password-reset/Mg/cb1x5l-4f1d0b9e8c7a6f5e4d3c/", "/admin/password-reset/*/*/"),
        ("/admin/password-reset/Mg/set-password/", "/admin/password-reset/*/set-password/"),
        ("/admin/password-reset/sent/", "/admin/password-reset/sent/"),
        ("/admin/password-reset/done/", "/admin/password-reset/done/"),
        ("/app/my/link/7/9c8b7a6f5e4d3c2b1a0f", "/app/my/link/*/*"),
        ("/app/my/start", "/app/my/start"),
        ("/api/trpc/getReceipt", "/api/trpc/getReceipt"),
        ("/admin/receipts/receipt/42/change/", "/admin/receipts/receipt/*/change/"),
        ("/admin/merchants/apikey/42/change/", "/admin/merchants/apikey/42/change/"),
        # Query strings, wherever a path or a link has one; a question in words stays.
        (
            '"GET /api/trpc/getReceipt?input=%7B%22token%22%7D HTTP/1.1" 200',
            '"GET /api/trpc/getReceipt?* HTTP/1.1" 200',
        ),
        ("GET /app/receipt/K7P2QX/not-mine?k=eKq3vP9x HTTP/1.1", "GET /app/receipt/*/not-mine?* HTTP/1.1"),
        ("https://receco.ng/n/K7P2QX?k=eKq3vP9x", "https://receco.ng/n/*?*"),
        ("Not your receipt? Remove this address", "Not your receipt? Remove this address"),
        # Links in a sentence, in a traceback's quotes.
        ("open https://receco.ng/r/K7P2QX now", "open https://receco.ng/r/* now"),
        ("Invalid HTTP request line: 'GET /admin/join/Zq3v9XkP2m/'", "Invalid HTTP request line: 'GET /admin/join/*/'"),
        # Keys and tokens by their form.
        (f"key {KEY} refused", "key poslive_Ab12Cd34Ef56* refused"),
        ("Authorization: Bearer some-gateway-token", "Authorization: Bearer *"),
        ("secret whsec_3kTq9ZxW1bNa0a1b2c3d4e5f6g7h", "secret whsec_*"),
        ("token rcpt_mi0v3k2p_q8z0lp_3kTq9ZxW1bNa0a1b2c3d4e5f6g7h taken", "token rcpt_* taken"),
    ],
)
def test_what_is_replaced(text, logged):
    assert redact(text) == logged


# Route parameters that name no secret: the admin's object ids and pages, the QR image's
# kind, the locker link's id (its secret follows it).
PUBLIC_PARAMETERS = {"object_id", "content_type_id", "id", "pk", "app_label", "url", "kind"}
_PARAMETER = re.compile(r"<(?:\w+:)?(?P<route>\w+)>|\(\?P<(?P<regex>\w+)>(?:[^()]|\([^()]*\))*\)")


def _routes(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def _sample(route: str) -> tuple[str, list[str]]:
    """A path of ``route`` with a distinct value for each parameter, and the secret ones."""
    secrets = []

    def value(match: re.Match) -> str:
        name = match["route"] or match["regex"]
        if name in PUBLIC_PARAMETERS:
            return "png" if name == "kind" else "42"
        secrets.append(f"Secret{len(secrets)}Value{name}")
        return secrets[-1]

    path = _PARAMETER.sub(value, route).replace("^", "").replace("$", "").replace("\\.", ".")
    return "/" + path, secrets


def test_every_secret_a_route_carries_is_replaced():
    """A new route with a parameter is redacted, or its parameter is named above as no secret."""
    routes = [route for route in _routes(get_resolver().url_patterns) if _PARAMETER.search(route)]
    assert len(routes) > 80  # the admin's, the customer's, the locker's, the log's
    kept = []
    for route in routes:
        path, secrets = _sample(route)
        logged = redact(f'127.0.0.1 "GET {path}" 200')
        kept += [(route, secret) for secret in secrets if secret in logged]
    assert kept == []
    carried = {route for route in routes if _sample(route)[1]}
    assert {"admin/join/<str:token>/", "app/my/link/<int:pk>/<str:secret>", "log/proof/<str:token>"} <= carried
    assert "callbacks/africastalking/<str:secret>/" in carried  # Africa's Talking signs no report


def _record(message, args=(), exc_info=None, stack_info=None) -> logging.LogRecord:
    record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, message, args, exc_info)
    record.stack_info = stack_info
    RequestIdFilter().filter(record)
    return record


def test_the_message_is_redacted_with_its_arguments_merged():
    record = _record("%s: %s", ("Service Unavailable", "/admin/join/Zq3v9XkP2m/"))
    assert RedactFilter().filter(record) is True
    assert record.getMessage() == "Service Unavailable: /admin/join/*/"
    assert logging.Formatter("%(message)s").format(record) == "Service Unavailable: /admin/join/*/"


def test_a_record_without_secrets_keeps_its_text_and_traceback():
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record("delivery %s raised", (7,), exc_info=sys.exc_info())
    RedactFilter().filter(record)
    assert record.getMessage() == "delivery 7 raised"
    assert record.exc_info is not None


def test_a_traceback_is_redacted_in_both_formats():
    try:
        raise ValueError("no receipt at /app/receipt/sale-0042-till7")
    except ValueError:
        exc_info = sys.exc_info()
    for formatter in (logging.Formatter("%(message)s"), JsonFormatter()):
        record = _record("failed", exc_info=exc_info)
        RedactFilter().filter(record)
        line = formatter.format(record)
        assert "sale-0042-till7" not in line
        assert "ValueError: no receipt at /app/receipt/*" in line
    assert "ValueError: no receipt at /app/receipt/*" in json.loads(line)["exc_info"]


def test_a_stack_is_redacted():
    record = _record("here", stack_info='  File "x.py", line 1, in f\n    get("/admin/join/Zq3v9XkP2m/")')
    RedactFilter().filter(record)
    assert record.stack_info.endswith('get("/admin/join/*/")')


def test_a_record_whose_arguments_do_not_fit_is_passed_on():
    record = _record("%s and %s", ("one",))
    assert RedactFilter().filter(record) is True
    assert record.args == ("one",)  # the handler reports the error, as without the filter
