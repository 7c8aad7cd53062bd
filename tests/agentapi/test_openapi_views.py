"""/api/openapi.json and the API reference page made from it (/api/reference/)."""

import re

import pytest

from receco.lib.trpc import PROCEDURES

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client):
    response = client.get("/api/reference/")
    assert response.status_code == 200
    return response


def test_the_document_is_cached_by_clients_for_five_minutes(client):
    response = client.get("/api/openapi.json")
    assert response["Cache-Control"] == "public, max-age=300"
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/api/openapi.json", "/api/reference/"])
def test_they_are_read_only(client, path):
    assert client.post(path).status_code == 405


def test_the_page_shows_every_procedure(page):
    html = page.content.decode()
    for name, procedure in PROCEDURES.items():
        assert f'<section class="sheet operation" id="{name}"' in html
        assert f'<span class="method method-{procedure.method.lower()}">{procedure.method}</span> {name}</h2>' in html


def test_the_page_shows_each_fields_type_bounds_and_notes(page):
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "items[].quantity integer required at least 1 · at most 1,000,000" in text
    assert "total_amount integer required at least 0 · at most 1,000,000,000,000,000 Minor units (kobo, cents)" in text
    assert "format one of &quot;orf&quot;, null" in text


def test_the_page_shows_each_error_status(page):
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "429 TOO_MANY_REQUESTS A rate limit" in text
    assert "409 CONFLICT The sale has refunds, or is itself a refund" in text


def test_the_examples_call_this_service(page, settings):
    assert (
        "curl -s &#x27;https://receipts.example.test/api/trpc/getReceipt?input=%7B%22token%22%3A%22K7P2QX%22%7D&#x27;"
        in page.content.decode()
    )


def test_the_page_loads_nothing_from_elsewhere_and_runs_no_script(page):
    html = page.content.decode()
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert "<script" not in html
    assert "<style" not in html
    assert " style=" not in html
    for url in re.findall(r'(?:href|src)="([^"]*)"', html):
        assert url.startswith(("/", "#", "data:")), url
