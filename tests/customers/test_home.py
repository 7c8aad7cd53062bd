"""The site's front page, /: customers to the scanner, shop owners to their dashboard."""

import pytest

pytestmark = pytest.mark.django_db


def test_it_sends_customers_to_the_scanner_and_shops_to_sign_in(client):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<a class="button" href="/app/scan">Open your receipt</a>' in html
    assert '<a class="button button-secondary" href="/admin/">Sign in to your dashboard</a>' in html
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_it_only_answers_reads(client):
    assert client.post("/").status_code == 405
