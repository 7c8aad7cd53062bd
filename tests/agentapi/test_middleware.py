"""The API's own entrance: the procedures at /api/trpc/<name> and, for the PHP SDK, at
/api/<name>; the SDKs' receipt links at /receipt/<token>. Requests are sent exactly as the
public SDKs send them: a bearer key and ``Content-Type: application/json`` on every call."""

import json
from urllib.parse import quote

import pytest

from tests.helpers import error_envelope

pytestmark = pytest.mark.django_db


def _sdk_headers(key):
    return {"Authorization": f"Bearer {key.key}", "Content-Type": "application/json"}


def test_the_php_sdk_creates_a_receipt_at_api_slash_procedure(client, sale, live_key):
    response = client.post(
        "/api/createReceiptFromPOS", json.dumps(sale), content_type="application/json", headers=_sdk_headers(live_key)
    )
    assert response.status_code == 200
    data = json.loads(response.content)["result"]["data"]
    assert data["token"] == sale["token"]
    assert data["short_code"] == "K7P2QX"


def test_the_php_sdk_reads_a_receipt_at_api_slash_procedure(client, stored, live_key):
    # Guzzle sends the JSON content type on a GET too, with an empty body.
    response = client.get(
        "/api/getReceipt?input=" + quote(json.dumps({"token": stored.token})), headers=_sdk_headers(live_key)
    )
    assert response.status_code == 200
    assert json.loads(response.content)["result"]["data"]["short_code"] == "STORE1"


def test_the_php_sdk_updates_a_contact_at_api_slash_procedure(client, stored, live_key):
    body = json.dumps({"token": stored.token, "email": "ada@gmail.com"})
    response = client.post(
        "/api/updateReceiptContact", body, content_type="application/json", headers=_sdk_headers(live_key)
    )
    assert response.status_code == 200
    assert json.loads(response.content) == {
        "result": {
            "data": {
                "success": True,
                "deliveries": [{"channel": "email", "destination": "a*******@gmail.com", "status": "queued"}],
            }
        }
    }


def test_errors_at_api_slash_procedure_answer_the_envelope_naming_the_procedure(client, live_key):
    response = client.get("/api/getReceipt?input=" + quote('{"token": "NOPE00"}'), headers=_sdk_headers(live_key))
    assert response.status_code == 404
    assert json.loads(response.content) == error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceipt")


def test_a_batch_of_procedures_is_served_at_api_slash_too(client, stored):
    inputs = quote(json.dumps({"0": {"token": "STORE1"}, "1": {"token": "NOPE00"}}))
    response = client.get(f"/api/getReceipt,getReceipt?batch=1&input={inputs}")
    assert response.status_code == 207
    first, second = json.loads(response.content)
    assert first["result"]["data"]["short_code"] == "STORE1"
    assert second["error"]["data"]["httpStatus"] == 404


@pytest.mark.parametrize("path", ["/api/getReceipts", "/api/", "/api/getReceipt,nope", "/api/getReceipt/extra"])
def test_other_paths_under_api_are_not_taken_for_procedures(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "text/html; charset=utf-8"


def test_a_host_not_allowed_at_api_slash_procedure_answers_the_envelope(client, stored):
    response = client.get("/api/getReceipt?input=" + quote('{"token": "STORE1"}'), headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert json.loads(response.content) == error_envelope(400, "INVALID_INPUT", "Bad request", "getReceipt")


def test_the_sdks_receipt_link_leads_to_the_receipt_page(client, stored):
    response = client.get(f"/receipt/{stored.token}")
    assert response.status_code == 301
    assert response["Location"] == f"/app/receipt/{stored.token}"
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"STORE1" in page.content


def test_the_sdks_receipt_link_with_an_unknown_token_still_leads_to_the_page_that_says_so(client):
    response = client.get("/receipt/rcpt_unknown0_zzzzzz", follow=True)
    assert response.redirect_chain == [("/app/receipt/rcpt_unknown0_zzzzzz", 301)]
    assert response.status_code == 404


def test_a_host_that_passed_is_checked_again_when_the_allowed_hosts_change(client, settings, stored):
    url = "/api/trpc/getReceipt?input=" + quote('{"token": "STORE1"}')
    assert client.get(url, headers={"Host": "shop.example"}).status_code == 400
    settings.ALLOWED_HOSTS = ["shop.example"]
    assert client.get(url, headers={"Host": "shop.example"}).status_code == 200
    settings.ALLOWED_HOSTS = ["other.example"]
    response = client.get(url, headers={"Host": "shop.example"})
    assert response.status_code == 400
    assert json.loads(response.content) == error_envelope(400, "INVALID_INPUT", "Bad request", "getReceipt")
