"""The wallet buttons on the receipt page and the addresses behind them: shown and
answering only when the operator configured that wallet, limited per client address."""

import io
import zipfile

import jwt
import pytest

pytestmark = pytest.mark.django_db

APPLE = "/app/receipt/{}/wallet/receipt.pkpass"
GOOGLE = "/app/receipt/{}/wallet/google"


def _page(client, receipt) -> str:
    response = client.get(f"/app/receipt/{receipt.token}")
    assert response.status_code == 200
    return response.content.decode()


def test_without_settings_there_are_no_buttons_and_the_addresses_answer_404(client, receipt):
    html = _page(client, receipt)
    assert "Wallet" not in html
    assert 'class="wallet' not in html
    for address in (APPLE, GOOGLE):
        response = client.get(address.format(receipt.token))
        assert response.status_code == 404
        assert "Page not found" in response.content.decode()


def test_each_button_is_shown_when_its_wallet_is_configured(client, receipt, apple_on):
    html = _page(client, receipt)
    apple = f'<a class="wallet-button" href="{APPLE.format(receipt.token)}" type="application/vnd.apple.pkpass">'
    assert f"{apple}Add to Apple Wallet</a>" in html
    assert "Add to Google Wallet" not in html
    assert client.get(GOOGLE.format(receipt.token)).status_code == 404


def test_both_buttons_in_one_labelled_group(client, receipt, apple_on, google_on):
    html = _page(client, receipt)
    assert '<div class="wallet" role="group" aria-label="Add to your phone\'s wallet">' in html
    assert f'<a class="wallet-button" href="{GOOGLE.format(receipt.token)}">Add to Google Wallet</a>' in html
    assert html.index("Add to Apple Wallet") < html.index("Add to Google Wallet") < html.index("Send my receipt")


def test_the_pass_is_served_as_a_pkpass_download(client, receipt, apple_on):
    response = client.get(APPLE.format(receipt.token))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.apple.pkpass"
    assert response["Content-Disposition"] == 'attachment; filename="receipt-K7P2QX.pkpass"'
    assert response["Cache-Control"] == "private, no-cache"
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert "pass.json" in archive.namelist()


def test_the_short_code_address_leads_to_the_tokens(client, receipt, apple_on):
    response = client.get(APPLE.format("K7P2QX"))
    assert response.status_code == 302
    assert response["Location"] == APPLE.format(receipt.token)


def test_an_unknown_receipt_gets_the_friendly_404(client, apple_on):
    response = client.get(APPLE.format("rcpt_unknown1_aaaaaa"))
    assert response.status_code == 404
    assert "We can’t find that receipt yet" in response.content.decode()


def test_google_redirects_to_the_save_link(client, receipt, google_on):
    response = client.get(GOOGLE.format(receipt.token))
    assert response.status_code == 302
    assert response["Location"].startswith("https://pay.google.com/gp/v/save/")
    assert response["Cache-Control"] == "private, no-store"
    claims = jwt.decode(
        response["Location"].rsplit("/", 1)[1], google_on.public_key(), algorithms=["RS256"], audience="google"
    )
    assert claims["payload"]["genericObjects"][0]["barcode"]["value"] == receipt.message_url


def test_only_get_is_answered(client, receipt, apple_on, google_on):
    for address in (APPLE, GOOGLE):
        assert client.post(address.format(receipt.token)).status_code == 405


def test_passes_are_limited_per_client_address_with_the_limit_stated(client, receipt, settings, apple_on, google_on):
    settings.RECECO_WALLET_PASS_RATE = "2/h"
    assert client.get(APPLE.format(receipt.token)).status_code == 200
    assert client.get(GOOGLE.format(receipt.token)).status_code == 302
    for address in (APPLE, GOOGLE):
        refused = client.get(address.format(receipt.token))
        assert refused.status_code == 429
        assert refused["Retry-After"] == "3600"
        assert refused["Content-Type"] == "text/html; charset=utf-8"
        assert (
            '<p class="error" role="alert" tabindex="-1" autofocus>Too many wallet passes asked for from your '
            "network: at most 2 per hour. Wait a while, then try again.</p>"
        ) in refused.content.decode()
    # Another address is not refused.
    assert client.get(APPLE.format(receipt.token), REMOTE_ADDR="198.51.100.7").status_code == 200
