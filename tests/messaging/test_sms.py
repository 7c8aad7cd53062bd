"""SMS backends; the webhook one against a real HTTP server on localhost."""

import json
import logging
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from messaging import sms
from messaging.sms import SmsError, SmsMessage, WebhookBackend, get_backend
from tests.background import serve_in_background

MESSAGE = SmsMessage(to="+2348031234589", body="Your receipt: https://r.example/x", idempotency_key="receco-delivery-7")


class Provider:
    """A local SMS provider: records requests and answers with a chosen status, optionally late."""

    def __init__(self):
        self.requests = []
        self.status = 200
        self.delay = 0.0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                provider.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                time.sleep(provider.delay)
                try:
                    self.send_response(provider.status)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"id": "msg-1", "to": "+2348031234589"}')
                except BrokenPipeError:
                    pass  # the client gave up waiting, as the timeout test wants

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/sms"
        self.close = serve_in_background(self.server)


@pytest.fixture
def provider():
    provider = Provider()
    yield provider
    provider.close()


def test_it_posts_json_with_the_token_and_an_idempotency_key(provider, settings):
    settings.RECECO_SMS_SENDER = "MamaPut"
    WebhookBackend(url=provider.url, token="s3cret").send(MESSAGE)
    [request] = provider.requests
    assert request["path"] == "/v1/sms"
    assert request["body"] == {
        "to": "+2348031234589",
        "from": "MamaPut",
        "message": "Your receipt: https://r.example/x",
    }
    assert request["headers"]["Authorization"] == "Bearer s3cret"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["Idempotency-Key"] == "receco-delivery-7"


def test_it_reads_its_configuration_from_settings(provider, settings):
    settings.RECECO_SMS_BACKEND = "webhook"
    settings.RECECO_SMS_WEBHOOK_URL = provider.url
    settings.RECECO_SMS_WEBHOOK_TOKEN = ""
    get_backend().send(MESSAGE)
    assert "Authorization" not in provider.requests[0]["headers"]


@pytest.mark.parametrize(("status", "permanent"), [(500, False), (503, False), (429, False), (400, True), (401, True)])
def test_failures_say_whether_to_retry_without_quoting_the_provider(provider, status, permanent):
    provider.status = status
    with pytest.raises(SmsError) as error:
        WebhookBackend(url=provider.url, token="t").send(MESSAGE)
    assert str(error.value) == f"SMS provider answered HTTP {status}"
    assert error.value.permanent is permanent


def test_a_slow_provider_times_out(provider):
    provider.delay = 2
    started = time.monotonic()
    with pytest.raises(SmsError) as error:
        WebhookBackend(url=provider.url, token="t", timeout=0.3).send(MESSAGE)
    assert time.monotonic() - started < 1.5
    assert error.value.permanent is False


def test_an_unreachable_provider_is_worth_retrying():
    with pytest.raises(SmsError, match="not reachable") as error:
        WebhookBackend(url="http://127.0.0.1:9/sms", token="t", timeout=1).send(MESSAGE)
    assert error.value.permanent is False


def test_the_console_backend_logs_the_number_masked(caplog, settings):
    settings.DEBUG = True
    caplog.set_level(logging.INFO)
    get_backend("console").send(MESSAGE)
    assert "SMS to +234*******89: Your receipt: https://r.example/x" in caplog.text
    assert "2348031234589" not in caplog.text


def test_without_debug_the_console_backend_keeps_the_link_out_of_the_log(caplog):
    caplog.set_level(logging.INFO)
    get_backend("console").send(MESSAGE)
    assert "SMS to +234*******89 (console backend: its text is logged in debug mode only)" in caplog.text
    assert "https://r.example/x" not in caplog.text


def test_the_locmem_backend_keeps_messages():
    sms.outbox.clear()
    get_backend("locmem").send(MESSAGE)
    assert sms.outbox == [MESSAGE]


def test_a_dotted_path_picks_any_backend():
    assert isinstance(get_backend("messaging.sms.DummyBackend"), sms.DummyBackend)
