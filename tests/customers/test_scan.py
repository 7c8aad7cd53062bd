import pytest

from receipts import gifts

pytestmark = pytest.mark.django_db


def test_it_shows_the_code_form(client):
    response = client.get("/app/scan")
    assert response.status_code == 200
    assert b'<label for="code">Receipt code</label>' in response.content
    assert b'name="code"' in response.content
    assert b"vendor/jsqr/jsQR.js" in response.content  # the camera fallback, from our own static files


def test_app_root_leads_to_the_scan_page(client):
    response = client.get("/app/")
    assert response.status_code == 302
    assert response["Location"] == "/app/scan"


@pytest.mark.parametrize("typed", ["K7P2QX", "k7p2qx", "  k7P2qx  "])
def test_a_code_in_any_case_opens_the_receipt(client, receipt, typed):
    response = client.get("/app/scan", {"code": typed})
    assert response.status_code == 302
    assert response["Location"] == f"/app/receipt/{receipt.token}"


# Issue 26.5: the page promised that spaces are ignored, but these were refused.
@pytest.mark.parametrize("typed", ["k7p 2qx", "K7P-2QX", " k7p - 2qx ", "K 7 P 2 Q X", "K7P\u20132QX", "k7p\u00a02qx"])
def test_spaces_and_dashes_anywhere_in_a_typed_code_are_ignored(client, receipt, typed):
    response = client.get("/app/scan", {"code": typed})
    assert response.status_code == 302
    assert response["Location"] == f"/app/receipt/{receipt.token}"


def test_the_page_says_spaces_and_dashes_are_ignored(client):
    assert b"Letters and digits, any case; spaces and dashes are ignored." in client.get("/app/scan").content


def test_a_token_keeps_its_dashes(client, receipt_factory):
    receipt = receipt_factory(token="till-7-sale-000123", short_code="DASH01")
    response = client.get("/app/scan", {"code": " till-7-sale-000123 "})
    assert response["Location"] == f"/app/receipt/{receipt.token}"


@pytest.mark.parametrize("typed", ["K7P-2QX", "k7p 2qx"])
def test_the_api_keeps_its_contract(api, receipt, typed):
    status, body = api.get("getReceipt", {"token": typed})
    assert (status, body["error"]["message"]) == (400, "Invalid token format")


def test_a_full_token_also_opens_the_receipt(client, receipt):
    response = client.get("/app/scan", {"code": receipt.token})
    assert response["Location"] == f"/app/receipt/{receipt.token}"


def test_an_unknown_code_is_explained_inline(client, receipt):
    response = client.get("/app/scan", {"code": "zzzzzz"})
    assert response.status_code == 404
    assert b"No receipt has that code" in response.content
    assert b'value="zzzzzz"' in response.content  # kept, to be corrected
    assert b'aria-invalid="true"' in response.content


@pytest.mark.parametrize("typed", ["K7P", "K7P2QX!", "<script>"])
def test_a_malformed_code_is_explained_inline(client, typed):
    response = client.get("/app/scan", {"code": typed})
    assert response.status_code == 400
    assert b"That is not a receipt code" in response.content
    assert b"<script>" not in response.content.split(b"</head>")[1]


def test_an_empty_code_asks_for_one(client):
    response = client.get("/app/scan", {"code": "   "})
    assert response.status_code == 400
    assert b"Enter the 6-character code" in response.content


# A gift receipt's code (G and six letters and digits) opens the gift receipt, never the sale's.
@pytest.mark.parametrize("typed", ["{code}", "{lower}", " {lower} ", "{a}-{b}", "{a} {b}", "{a}\u2013{b}"])
def test_a_gift_receipts_code_opens_the_gift_receipt(client, receipt, typed):
    gift = gifts.gift_receipt(receipt)
    code = gift.code
    typed = typed.format(code=code, lower=code.lower(), a=code[:4], b=code[4:])
    response = client.get("/app/scan", {"code": typed})
    assert response.status_code == 302
    assert response["Location"] == f"/app/gift/{gift.token}"


def test_a_gift_code_that_finds_nothing_is_answered_as_a_receipt_code_is(client, receipt):
    gifts.gift_receipt(receipt)
    response = client.get("/app/scan", {"code": "GZZZZZZ"})
    assert response.status_code == 404
    assert b"No receipt has that code" in response.content
    assert b'value="GZZZZZZ"' in response.content


@pytest.mark.parametrize("typed", ["GZZZZZ0", "XZZZZZZ", "GZZ-ZZZ!"])  # 0 is in no code; not G; a "!"
def test_a_code_that_is_no_gift_code_is_malformed_as_before(client, typed):
    response = client.get("/app/scan", {"code": typed})
    assert response.status_code == 400
    assert b"That is not a receipt code" in response.content


def test_guessing_gift_codes_spends_the_same_budget(client, receipt, settings):
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "3/h"
    gift = gifts.gift_receipt(receipt)
    statuses = [client.get("/app/scan", {"code": code}).status_code for code in ("GZZZZZ2", "ZZZZZ2", "GZZZZZ3")]
    assert statuses == [404, 404, 404]
    response = client.get("/app/scan", {"code": gift.code})  # one that exists, once the budget is spent
    assert response.status_code == 429
    assert b"Too many codes tried" in response.content
    assert client.get("/app/scan", {"code": receipt.short_code}).status_code == 429


def test_the_page_says_a_gift_receipts_code_is_taken(client):
    assert b"or 7 beginning with G on a gift receipt." in client.get("/app/scan").content


def test_guessing_codes_is_stopped(client, receipt, settings):
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "3/h"
    statuses = [client.get("/app/scan", {"code": f"ZZZZZ{n}"}).status_code for n in range(5)]
    assert statuses == [404, 404, 404, 429, 429]
    # ... including codes that exist: the limit is on the client, not the code.
    response = client.get("/app/scan", {"code": "K7P2QX"})
    assert response.status_code == 429
    assert b"Too many codes tried" in response.content
    assert 1 <= int(response["Retry-After"]) <= 3600


def test_a_full_token_opens_its_receipt_when_codes_are_refused(client, receipt, settings):
    # Carrier NAT: one person's typos must not lock a mall out of the receipts its QR codes hold.
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/h"
    [client.get("/app/scan", {"code": f"ZZZZZ{n}"}) for n in range(3)]
    assert client.get("/app/scan", {"code": receipt.short_code}).status_code == 429
    assert client.get(f"/app/receipt/{receipt.token}").status_code == 200
    assert client.get(f"/app/receipt/{receipt.token}/qr.png").status_code == 200
    response = client.get(f"/app/receipt/{receipt.short_code}")
    assert response.status_code == 429
    assert b"Too many tries" in response.content
    assert 1 <= int(response["Retry-After"]) <= 3600


def test_unknown_tokens_on_the_pages_do_not_count(client, receipt, settings):
    # A QR code of a sale the till has not uploaded yet is opened again and again.
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "2/h"
    assert [client.get("/app/receipt/rcpt_notyet00_aaaaaa").status_code for _ in range(5)] == [404] * 5
    assert client.get("/app/scan", {"code": receipt.short_code}).status_code == 302


def test_the_scan_page_has_a_content_security_policy(client):
    policy = client.get("/app/scan")["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self';" in policy


def test_misses_on_the_pages_and_the_api_share_one_budget(client, api, receipt, settings):
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "3/h"
    assert api.get("getReceipt", {"token": "ZZZZZ1"})[0] == 404
    assert api.get("getReceipt", {"token": "ZZZZZ2"})[0] == 404
    assert client.get("/app/receipt/ZZZZZ3").status_code == 404
    assert client.get("/app/scan", {"code": "K7P2QX"}).status_code == 429
    assert api.get("getReceipt", {"token": "K7P2QX"})[0] == 429


def test_the_client_address_is_read_as_the_api_reads_it(client, receipt, settings):
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = "1/h"
    settings.RECECO_TRUSTED_PROXY_COUNT = 1
    assert (
        client.get(
            "/app/scan", {"code": "ZZZZZ1"}, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7"
        ).status_code
        == 404
    )
    # Another customer behind the same proxy is not blocked by the first one's miss.
    assert (
        client.get(
            "/app/scan", {"code": "K7P2QX"}, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.9"
        ).status_code
        == 302
    )
    assert (
        client.get(
            "/app/scan", {"code": "K7P2QX"}, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7"
        ).status_code
        == 429
    )
